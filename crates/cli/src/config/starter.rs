//! `schemascope init`: a starting configuration file for the sources given, with their
//! descriptions left to fill and passwords moved out of URIs into environment variables.

use schemascope_sources::{DemoSet, Format, Location, SourceSpec};

/// The configuration text for `specs` (`base`: the directory relative paths were given from,
/// made absolute so the file works from any directory).
pub(crate) fn starter(specs: &[SourceSpec], base: &std::path::Path) -> String {
    let names = distinct_names(specs);
    // One variable per password: names that differ only in case or in `-` `.` `_` would share
    // one, so the taken ones get `_2`, `_3`….
    let mut taken: Vec<String> = Vec::new();
    let mut variables = names
        .iter()
        .zip(specs)
        .filter(|(_, spec)| matches!(&spec.location, Location::Postgres(uri) | Location::ClickHouse(uri) | Location::MySql(uri) if without_password(uri).is_some()))
        .map(|(name, _)| {
            let base = format!("{}_PASSWORD", name.to_ascii_uppercase().replace(['-', '.'], "_"));
            let mut variable = base.clone();
            let mut n = 2;
            while taken.contains(&variable) {
                variable = format!("{base}_{n}");
                n += 1;
            }
            taken.push(variable.clone());
            variable
        })
        .collect::<Vec<String>>()
        .into_iter();
    let mut text = String::from(
        "# schemascope configuration: `schemascope serve --config <this file>`; check it with\n\
         # `schemascope check --config <this file>`. Values may use ${VAR} and ${VAR:-default};\n\
         # relative paths are relative to this file. Edits apply while serving.\n\
         \n\
         # [server]\n\
         # http = \"127.0.0.1:8750\"          # streamable HTTP here, instead of stdio\n\
         # token = \"${SCHEMASCOPE_TOKEN}\"    # clients send it as a bearer token\n\
         # tools = [\"discovery\", \"sql\"]     # only these tools or toolsets (discovery, sql,\n\
         #                                  # graph-style, graph-view): fewer tokens per turn\n",
    );
    for (spec, name) in specs.iter().zip(&names) {
        text.push_str("\n[[sources]]\n");
        text.push_str(&format!("name = {}\n", quoted(name)));
        text.push_str(
            "# What this source holds and what its names mean, for the model: fill it in.\n",
        );
        text.push_str("description = \"\"\n");
        let file = |path: &std::path::Path| {
            let path = if path.is_absolute() { path.to_path_buf() } else { base.join(path) };
            format!("path = {}\n", quoted(&path.display().to_string()))
        };
        match &spec.location {
            Location::File { path, format } => {
                text.push_str(&file(path));
                let forced = match format {
                    Some(Format::Graph) => Some("graph"),
                    Some(Format::Records) => Some("records"),
                    Some(Format::Documents) => Some("documents"),
                    _ => None,
                };
                if let Some(format) = forced {
                    text.push_str(&format!("format = {}\n", quoted(format)));
                }
            }
            Location::Sqlite(path) => {
                text.push_str(&file(path));
                text.push_str("format = \"sqlite\"\n");
            }
            Location::Demo(set) => {
                let set = match set {
                    DemoSet::Infrastructure => "demo:infrastructure",
                    DemoSet::Sensors => "demo:sensors",
                };
                text.push_str(&format!("uri = {}\n", quoted(set)));
            }
            Location::Aimdb(socket) => {
                text.push_str(&format!(
                    "uri = {}\n",
                    quoted(&format!("aimdb:{}", socket.display()))
                ));
                text.push_str(
                    "# set_record may change the records the instance marks writable only if this is true.\nallow_writes = false\n",
                );
            }
            Location::Postgres(uri) | Location::ClickHouse(uri) | Location::MySql(uri) => {
                match without_password(uri) {
                    Some(bare) => {
                        let variable = variables.next().unwrap_or_default();
                        text.push_str(&format!("uri = {}\n", quoted(&bare)));
                        text.push_str(&format!(
                        "# The password was taken out of the URI: set {variable} where the server starts.\n"
                    ));
                        text.push_str(&format!("password_env = {}\n", quoted(&variable)));
                    }
                    None => text.push_str(&format!("uri = {}\n", quoted(uri))),
                }
            }
        }
    }
    if specs.is_empty() {
        text.push_str(
            "\n# [[sources]]\n# name = \"shop\"\n# description = \"Orders, customers and products of the web shop\"\n\
             # uri = \"postgres://reader@db.internal:5432/shop\"\n# password_env = \"SHOP_PASSWORD\"\n",
        );
    }
    text
}

/// A TOML basic string: JSON's escapes are TOML's.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into())
}

/// The names the sources get: their own, with `_2`, `_3`… after a name already taken (a file
/// and a database of the same name), so the file loads.
fn distinct_names(specs: &[SourceSpec]) -> Vec<String> {
    let mut names: Vec<String> = Vec::with_capacity(specs.len());
    for spec in specs {
        let mut name = spec.name.clone();
        let mut n = 2;
        while names.contains(&name) {
            name = format!("{}_{n}", spec.name);
            n += 1;
        }
        names.push(name);
    }
    names
}

/// `uri` without its password — in the user info or as a `password` parameter — when it has
/// one.
fn without_password(uri: &str) -> Option<String> {
    let (scheme, rest) = uri.split_once("://")?;
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let (user_info, host) = match authority.rsplit_once('@') {
        Some((info, host)) => (Some(info), host),
        None => (None, authority),
    };
    let (path, query) = match tail.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (tail, None),
    };
    let kept: Vec<&str> = query
        .map(|q| {
            q.split('&').filter(|p| !p.to_ascii_lowercase().starts_with("password=")).collect()
        })
        .unwrap_or_default();
    let in_query = query.is_some_and(|q| kept.len() != q.split('&').count());
    let user = match user_info {
        Some(info) => match info.split_once(':') {
            Some((user, _)) => Some(user),
            None if in_query => Some(info),
            None => return None,
        },
        None if in_query => None,
        None => return None,
    };
    let mut out = format!("{scheme}://");
    if let Some(user) = user {
        out.push_str(user);
        out.push('@');
    }
    out.push_str(host);
    out.push_str(path);
    if !kept.is_empty() {
        out.push('?');
        out.push_str(&kept.join("&"));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Config, Context};

    #[test]
    fn a_starter_loads_back_with_the_password_from_the_environment() {
        let specs: Vec<SourceSpec> = [
            "shop=postgres://app:hunter2@db:5432/shop",
            "data/chinook.sqlite",
            "g=graph:graph.json",
            "demo:sensors",
        ]
        .iter()
        .map(|s| s.parse().expect("spec"))
        .collect();
        let text = starter(&specs, std::path::Path::new("/home/ana/project"));
        assert!(!text.contains("hunter2"), "{text}");
        // A second source of a taken name, and a password given as a parameter.
        let more: Vec<SourceSpec> = [
            "data/chinook.sqlite",
            "postgres://app@db:5432/chinook?password=pa%40ss&sslmode=disable",
        ]
        .iter()
        .map(|s| s.parse().expect("spec"))
        .collect();
        let text2 = starter(&more, std::path::Path::new("/p"));
        let clashing: Vec<SourceSpec> =
            ["postgres://u:p1@h/a-b", "postgres://u:p2@h/a_b", "postgres://u:p3@h/A_B"]
                .iter()
                .map(|s| s.parse().expect("spec"))
                .collect();
        let text3 = starter(&clashing, std::path::Path::new("/p"));
        for variable in ["\"A_B_PASSWORD\"", "\"A_B_PASSWORD_2\"", "\"A_B_PASSWORD_3\""] {
            assert_eq!(text3.matches(variable).count(), 1, "{text3}");
        }
        assert!(!text2.contains("pa%40ss"), "{text2}");
        assert!(
            text2.contains("name = \"chinook_2\"") && text2.contains("CHINOOK_2_PASSWORD"),
            "{text2}"
        );
        assert!(
            text2.contains("uri = \"postgres://app@db:5432/chinook?sslmode=disable\""),
            "{text2}"
        );
        let env = |name: &str| (name == "SHOP_PASSWORD").then(|| "hunter2".to_string());
        let config = Config::parse(
            std::path::Path::new("/x/schemascope.toml"),
            &text,
            &Context { env: &env },
        )
        .expect("the starter loads");
        let names: Vec<&str> = config.sources.iter().map(|s| s.spec.name.as_str()).collect();
        assert_eq!(names, ["shop", "chinook", "g", "sensors"]);
        assert_eq!(
            config.sources[0].spec.location,
            Location::Postgres("postgres://app:hunter2@db:5432/shop".into())
        );
        assert_eq!(
            config.sources[1].spec.location,
            Location::Sqlite("/home/ana/project/data/chinook.sqlite".into())
        );
        assert_eq!(
            config.sources[2].spec.location,
            Location::File {
                path: "/home/ana/project/graph.json".into(),
                format: Some(Format::Graph)
            }
        );
        // An empty description is no description.
        assert_eq!(config.sources[0].spec.description, None);
    }
}
