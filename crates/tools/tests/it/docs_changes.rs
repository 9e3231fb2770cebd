//! A docs directory changed while served: each change — an edit in place, a new file, a rename,
//! a removal, a permission change, the directory replaced, a file edited through a hard link
//! or through a link out of the directory — is in the answer of the very next search, though
//! searches with nothing changed reuse the index without reading the directory.

use std::path::Path;

use schemascope_tools::{SearchSchemaDocsParams, Services, search_schema_docs};

use crate::common::{chinook_spec, ok, registry};

const INVOICE: &str = "# Table: Invoice\n\n## Purpose\n\nPurchases.\n";

fn doc(about: &str) -> String {
    format!("# Table: Invoice\n\n## Purpose\n\nPurchases. {about}\n")
}

/// The table of the first chunk that answers `question`, if any.
fn first_table(registry: &Services, question: &str) -> Option<String> {
    let data = ok(search_schema_docs(
        &registry.docs,
        SearchSchemaDocsParams {
            source: Some("chinook".into()),
            question: question.into(),
            top_k: Some(1),
        },
    ));
    data["chunks"][0]["table"].as_str().map(str::to_string)
}

fn warnings(registry: &Services) -> String {
    let data = ok(search_schema_docs(
        &registry.docs,
        SearchSchemaDocsParams {
            source: Some("chinook".into()),
            question: "invoice purchases".into(),
            top_k: Some(1),
        },
    ));
    data["warnings"].to_string()
}

fn served(dir: &Path) -> Services {
    let registry = registry(&[&chinook_spec()]);
    registry.docs.set_dir("chinook", dir.to_path_buf());
    registry
}

#[test]
fn every_change_of_the_docs_is_seen_by_the_next_search() {
    let dir = tempfile::tempdir().expect("tempdir");
    let invoice = dir.path().join("Invoice.md");
    std::fs::write(&invoice, INVOICE).expect("write");
    let registry = served(dir.path());
    assert_eq!(first_table(&registry, "refunds recorded"), None);
    assert_eq!(first_table(&registry, "refunds recorded"), None, "asked again: still none");

    // Rewritten in place, the same length: only the content differs.
    let edited = doc("Refunds here.");
    std::fs::write(&invoice, &edited).expect("edit");
    assert_eq!(first_table(&registry, "refunds recorded").as_deref(), Some("Invoice"));
    std::fs::write(&invoice, doc("Rebates here.")).expect("edit again");
    assert_eq!(first_table(&registry, "refunds recorded"), None, "the edit of an edit");
    assert_eq!(first_table(&registry, "rebates").as_deref(), Some("Invoice"));

    // Written elsewhere and renamed in, as editors save.
    let elsewhere = dir.path().join("Invoice.md.tmp");
    std::fs::write(&elsewhere, doc("Chargebacks here.")).expect("write beside");
    std::fs::rename(&elsewhere, &invoice).expect("rename over");
    assert_eq!(first_table(&registry, "chargebacks").as_deref(), Some("Invoice"));

    // Removed, then a new file.
    std::fs::remove_file(&invoice).expect("remove");
    assert_eq!(first_table(&registry, "chargebacks"), None);
    std::fs::write(
        dir.path().join("Track.md"),
        "# Table: Track\n\n## Purpose\n\nSongs with royalties.\n",
    )
    .expect("create");
    assert_eq!(first_table(&registry, "royalties").as_deref(), Some("Track"));
}

#[test]
fn a_file_made_unreadable_or_readable_again_is_seen_by_the_next_search() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let invoice = dir.path().join("Invoice.md");
    std::fs::write(&invoice, doc("Refunds here.")).expect("write");
    let registry = served(dir.path());
    assert_eq!(first_table(&registry, "refunds recorded").as_deref(), Some("Invoice"));
    std::fs::set_permissions(&invoice, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    // Root reads any file: the change is still seen, the answer is the same.
    let unreadable = std::fs::read_to_string(&invoice).is_err();
    assert_eq!(warnings(&registry).contains("Invoice.md"), unreadable, "{}", warnings(&registry));
    std::fs::set_permissions(&invoice, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    assert!(!warnings(&registry).contains("Invoice.md"));
    assert_eq!(first_table(&registry, "refunds recorded").as_deref(), Some("Invoice"));
}

#[test]
fn a_docs_directory_replaced_or_created_at_its_path_is_read_again() {
    let parent = tempfile::tempdir().expect("tempdir");
    let dir = parent.path().join("docs");
    let registry = served(&dir);
    assert_eq!(first_table(&registry, "refunds recorded"), None, "no directory yet");
    std::fs::create_dir(&dir).expect("mkdir");
    std::fs::write(dir.join("Invoice.md"), doc("Refunds here.")).expect("write");
    assert_eq!(first_table(&registry, "refunds recorded").as_deref(), Some("Invoice"));
    // Another directory takes its place: nothing in the old one changed.
    let next = parent.path().join("next");
    std::fs::create_dir(&next).expect("mkdir");
    std::fs::write(next.join("Invoice.md"), doc("Rebates here.")).expect("write");
    std::fs::rename(&dir, parent.path().join("old")).expect("move away");
    std::fs::rename(&next, &dir).expect("move in");
    assert_eq!(first_table(&registry, "refunds recorded"), None);
    assert_eq!(first_table(&registry, "rebates").as_deref(), Some("Invoice"));
}

#[test]
fn docs_edited_through_a_hard_link_or_a_link_out_are_seen_by_the_next_search() {
    let dir = tempfile::tempdir().expect("tempdir");
    let outside = tempfile::tempdir().expect("tempdir");
    // A hard link: written through the other name, the docs directory hears nothing.
    let other = outside.path().join("invoice-notes.md");
    std::fs::write(&other, doc("Refunds here.")).expect("write");
    std::fs::hard_link(&other, dir.path().join("Invoice.md")).expect("hard link");
    let registry = served(dir.path());
    assert_eq!(first_table(&registry, "refunds recorded").as_deref(), Some("Invoice"));
    std::fs::write(&other, doc("Rebates here.")).expect("edit through the other name");
    assert_eq!(first_table(&registry, "refunds recorded"), None);
    assert_eq!(first_table(&registry, "rebates").as_deref(), Some("Invoice"));

    // A link out of the directory, followed when asked.
    std::fs::remove_file(dir.path().join("Invoice.md")).expect("remove");
    let target = outside.path().join("track.md");
    std::fs::write(&target, "# Table: Track\n\n## Purpose\n\nSongs with royalties.\n")
        .expect("write");
    std::os::unix::fs::symlink(&target, dir.path().join("Track.md")).expect("symlink");
    registry.docs.set_follow_links(true);
    assert_eq!(first_table(&registry, "royalties").as_deref(), Some("Track"));
    std::fs::write(&target, "# Table: Track\n\n## Purpose\n\nSongs with licences.\n")
        .expect("edit");
    assert_eq!(first_table(&registry, "royalties"), None);
    assert_eq!(first_table(&registry, "licences").as_deref(), Some("Track"));
}
