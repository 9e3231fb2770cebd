//! The byte cap on every tool result. Tools already bound what they list (rows, ids, items,
//! samples); this is the last line: whatever a result holds, its JSON stays under a cap, so no
//! call can hand an LLM (or a client) an unbounded payload. Over the cap, the longest strings are
//! cut first, then the array or object holding the bulk of the result halved, each cut recorded
//! — its path and how much was kept — in the envelope's `truncated` field and said in the
//! message.

use serde::Serialize;
use serde_json::Value;

use crate::result::ToolResult;

/// The default cap: 256 KiB of JSON, about 64k tokens.
pub const DEFAULT_MAX_RESULT_BYTES: usize = 256 * 1024;

/// The smallest cap honoured: below it even a short error could not be said.
const MIN_MAX_BYTES: usize = 4 * 1024;

/// Objects of at most this many members are never halved (see [`dominant`]).
const FEW_MEMBERS: usize = 16;

/// Deeper values are measured and cut as a whole.
const MAX_DEPTH: usize = 64;

/// What the cap cut from a result.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Truncation {
    /// The cap, in bytes of JSON.
    pub max_bytes: usize,
    /// The result's size before the cuts.
    pub original_bytes: usize,
    /// Each cut, in the order made.
    pub cuts: Vec<Cut>,
}

/// One cut: where, and how much of it was kept.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Cut {
    /// The JSON path of the cut value within the envelope (`data.rows`, `data.items[3].value`).
    pub path: String,
    /// What was kept and what there was: elements of an array, or bytes of a string.
    pub kept: usize,
    /// The original length (elements or bytes).
    pub total: usize,
    /// `"elements"` (of an array), `"members"` (of an object) or `"bytes"` (of a string).
    pub unit: &'static str,
}

/// Counts bytes written without keeping them.
struct Counter(usize);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The size of `value` as JSON.
fn json_size(value: &impl Serialize) -> usize {
    let mut counter = Counter(0);
    // Writing to a counter cannot fail; a value that cannot serialize counts as nothing.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
fn prefix(s: &str, max: usize) -> &str {
    let mut end = max.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Where a value sits: a path of keys and indexes from the envelope.
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

fn path_text(steps: &[Step]) -> String {
    let mut out = String::new();
    for step in steps {
        match step {
            Step::Key(key) if out.is_empty() => out.push_str(key),
            Step::Key(key) => {
                out.push('.');
                out.push_str(key);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

fn at_mut<'a>(root: &'a mut Value, steps: &[Step]) -> Option<&'a mut Value> {
    steps.iter().try_fold(root, |at, step| match step {
        Step::Key(key) => at.get_mut(key.as_str()),
        Step::Index(i) => at.get_mut(*i),
    })
}

/// Places in a result with their sizes: a path of steps from the root, and bytes or elements.
type Sized = Vec<(Vec<Step>, usize)>;

/// Every string longer than `longer_than` bytes, with its path and size, down to [`MAX_DEPTH`].
fn long_strings(root: &Value, longer_than: usize) -> Sized {
    let mut strings = Vec::new();
    let mut stack: Vec<(Vec<Step>, &Value)> = vec![(Vec::new(), root)];
    while let Some((path, value)) = stack.pop() {
        match value {
            Value::String(s) if s.len() > longer_than => strings.push((path, s.len())),
            Value::Array(items) if path.len() < MAX_DEPTH => {
                for (i, item) in items.iter().enumerate() {
                    let mut inner = path.clone();
                    inner.push(Step::Index(i));
                    stack.push((inner, item));
                }
            }
            Value::Object(map) if path.len() < MAX_DEPTH => {
                for (key, item) in map {
                    let mut inner = path.clone();
                    inner.push(Step::Key(key.clone()));
                    stack.push((inner, item));
                }
            }
            _ => {}
        }
    }
    strings
}

/// The container whose halving cuts the most where the bulk is: from the root, go into the
/// largest child container while it holds more than half of where we are (or where we are
/// cannot be halved); the rows of a table, the properties of a schema. The root itself (the
/// envelope's parts) is never halved. `None` when nothing can be halved.
fn dominant(root: &Value) -> Option<Vec<Step>> {
    let mut path = Vec::new();
    let (mut at, mut at_size) = (root, json_size(root));
    let mut last_halvable = None;
    while path.len() < MAX_DEPTH {
        let children: Vec<(Step, &Value)> = match at {
            Value::Array(items) => {
                items.iter().enumerate().map(|(i, v)| (Step::Index(i), v)).collect()
            }
            Value::Object(map) => map.iter().map(|(k, v)| (Step::Key(k.clone()), v)).collect(),
            _ => break,
        };
        // An object of a few members is structure (a schema's `type`, `properties`,
        // `required`), not bulk: it is gone into, never halved.
        let halvable = !path.is_empty()
            && if at.is_object() { children.len() > FEW_MEMBERS } else { children.len() > 1 };
        if halvable {
            last_halvable = Some(path.clone());
        }
        let largest = children
            .into_iter()
            .filter(|(_, v)| v.is_array() || v.is_object())
            .map(|(step, v)| (json_size(v), step, v))
            .max_by_key(|(size, _, _)| *size);
        match largest {
            Some((size, step, child)) if !halvable || size * 2 > at_size => {
                path.push(step);
                (at, at_size) = (child, size);
            }
            _ => return if halvable { Some(path) } else { last_halvable },
        }
    }
    last_halvable
}

/// After a JSON Schema's `properties` lost members, its `required` names only what is left: a
/// cut schema still describes what it lists.
fn keep_schema_consistent(tree: &mut Value, path: &[Step]) {
    let Some((Step::Key(last), parent)) = path.split_last() else { return };
    if last != "properties" {
        return;
    }
    let Some(Value::Object(schema)) = at_mut(tree, parent) else { return };
    let kept: std::collections::HashSet<String> = match schema.get("properties") {
        Some(Value::Object(properties)) => properties.keys().cloned().collect(),
        _ => return,
    };
    if let Some(Value::Array(required)) = schema.get_mut("required") {
        required.retain(|name| name.as_str().is_some_and(|name| kept.contains(name)));
    }
}

/// Keeps the first half of an array's elements or an object's members (in their order); returns
/// how many there were and the unit, or `None` for anything else.
fn halve(value: &mut Value) -> Option<(usize, &'static str)> {
    match value {
        Value::Array(items) => {
            let total = items.len();
            items.truncate(total / 2);
            Some((total, "elements"))
        }
        Value::Object(map) => {
            let total = map.len();
            *map = std::mem::take(map).into_iter().take(total / 2).collect();
            Some((total, "members"))
        }
        _ => None,
    }
}

/// What a cut answer tells its reader to do to see what was cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeeTheRest {
    /// Ask for less: the tool takes arguments that select part of its answer.
    NarrowTheRequest,
    /// The tool takes no arguments, so only a larger cap shows more.
    RaiseTheCap,
}

impl SeeTheRest {
    /// The advice, as the cut answer's message ends with it.
    fn advice(self) -> &'static str {
        match self {
            Self::NarrowTheRequest => "narrow the request to see the rest",
            Self::RaiseTheCap => {
                "this tool takes no arguments to narrow it: a larger result cap (`--max-result-bytes`, `max_result_bytes`) shows the rest"
            }
        }
    }
}

impl ToolResult {
    /// This result with its JSON within `max_bytes` (at least 4 KiB): unchanged when it fits;
    /// else with the longest strings and then the largest arrays cut, every cut listed in
    /// `truncated` and announced in `message`.
    pub fn capped(self, max_bytes: usize) -> Self {
        self.capped_as(max_bytes, SeeTheRest::NarrowTheRequest)
    }

    /// [`Self::capped`], a cut answer saying how to see the rest with `see_the_rest`.
    pub fn capped_as(self, max_bytes: usize, see_the_rest: SeeTheRest) -> Self {
        let original_bytes = json_size(&self);
        self.cut_to(max_bytes, original_bytes, see_the_rest)
    }

    /// [`Self::capped`] and the result's JSON text, written once: the cap measures the text it
    /// returns, so an answer that fits is serialised a single time (a cut one, twice). The text is
    /// the envelope's (`serde_json::to_string(&result.into_value())`).
    pub fn capped_with_text(self, max_bytes: usize, see_the_rest: SeeTheRest) -> (Self, String) {
        // A ToolResult always serialises (string keys, no failing `Serialize` impl).
        let text = serde_json::to_string(&self).unwrap_or_default();
        if text.len() <= max_bytes.max(MIN_MAX_BYTES) {
            return (self, text);
        }
        let capped = self.cut_to(max_bytes, text.len(), see_the_rest);
        let text = serde_json::to_string(&capped).unwrap_or_default();
        (capped, text)
    }

    /// The cuts of [`Self::capped`], for a result whose JSON is `original_bytes` long.
    fn cut_to(mut self, max_bytes: usize, original_bytes: usize, see_the_rest: SeeTheRest) -> Self {
        let max_bytes = max_bytes.max(MIN_MAX_BYTES);
        if original_bytes <= max_bytes {
            return self;
        }
        // Everything but `data` is small or already bounded (the members beside it, such as a
        // graph tool's 1,000 affected ids at most); they are cut like `data` is, as one tree.
        let mut tree = Value::Object(std::mem::take(&mut self.beside));
        tree["data"] = std::mem::take(&mut self.data);
        let mut cuts = Vec::new();
        // The message keeps at most a quarter of the cap: one that repeats a huge input (a 1 MB
        // selector, an LLM's 6 MB answer) keeps its first part, and the data keeps its room.
        let message_room = max_bytes / 4;
        if json_size(&self.message) > message_room {
            let total = self.message.len();
            let mut keep = message_room;
            // Escaping can make the JSON of a prefix longer than the prefix: shorten until it fits.
            while keep > 0 && json_size(&prefix(&self.message, keep)) > message_room {
                keep /= 2;
            }
            let kept = prefix(&self.message, keep).len();
            self.message.truncate(kept);
            self.message.push('…');
            cuts.push(Cut { path: "message".into(), kept, total, unit: "bytes" });
        }
        // Room for the message, the `truncated` record and the other fields.
        let budget = max_bytes.saturating_sub(json_size(&self.message) + 2_048);
        // Strings first: one 10 MB value should not cost every row its neighbours.
        let longest = (budget / 8).max(256);
        for (path, len) in long_strings(&tree, longest) {
            if let Some(Value::String(s)) = at_mut(&mut tree, &path) {
                let kept = prefix(s, longest).len();
                s.truncate(kept);
                s.push('…');
                cuts.push(Cut { path: path_text(&path), kept, total: len, unit: "bytes" });
            }
        }
        // Then halve the largest array or object until it all fits: a schema of 12,000
        // properties keeps its first properties rather than becoming nothing.
        while json_size(&tree) + json_size(&cuts) > budget {
            let Some(path) = dominant(&tree) else { break };
            let Some((total, unit)) = at_mut(&mut tree, &path).and_then(halve) else { break };
            keep_schema_consistent(&mut tree, &path);
            let text = path_text(&path);
            // A second halving of the same container updates its cut.
            match cuts.iter_mut().find(|c| c.path == text && c.unit == unit) {
                Some(cut) => cut.kept = total / 2,
                None => cuts.push(Cut { path: text, kept: total / 2, total, unit }),
            }
        }
        if json_size(&tree) + json_size(&cuts) > budget {
            // Nothing left to halve (one huge object of many keys, say): say what it was instead.
            let size = json_size(&tree["data"]);
            cuts.push(Cut { path: "data".into(), kept: 0, total: size, unit: "bytes" });
            tree["data"] = serde_json::json!({"omitted": format!("{size} bytes of JSON, more than the {max_bytes}-byte cap allows")});
        }
        self.data = tree["data"].take();
        if let Value::Object(mut beside) = tree {
            beside.remove("data");
            self.beside = beside;
        }
        self.message = format!(
            "{} (The answer was cut to fit {} KiB: {} cut{}, listed in `truncated`; {}.)",
            self.message.trim_end(),
            max_bytes / 1024,
            cuts.len(),
            if cuts.len() == 1 { "" } else { "s" },
            see_the_rest.advice()
        );
        self.truncated = Some(Truncation { max_bytes, original_bytes, cuts });
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_text_written_with_the_cap_is_the_envelopes() {
        let mut fits =
            ToolResult::ok("fine", json!({"s": "quote \" é \u{1}", "x": [1.5, -0.0, 1e300, null]}));
        fits.beside.insert("affectedNodes".into(), json!(["n1", "n2"]));
        let big = ToolResult::ok(
            "big",
            json!({"items": (0..2_000).map(|i| json!({"id": i, "v": "x".repeat(40)})).collect::<Vec<_>>()}),
        );
        let failed = ToolResult::failed("no", json!({"error": "unknown_source"}));
        for result in [fits, big, failed] {
            let (capped, text) =
                result.clone().capped_with_text(16 * 1024, SeeTheRest::NarrowTheRequest);
            let expected = result.capped(16 * 1024);
            assert_eq!(capped, expected);
            assert_eq!(text, serde_json::to_string(&expected.into_value()).unwrap_or_default());
        }
    }

    #[test]
    fn a_result_under_the_cap_is_unchanged() {
        let result = ToolResult::ok("fine", json!({"rows": [1, 2, 3]}));
        assert_eq!(result.clone().capped(DEFAULT_MAX_RESULT_BYTES), result);
    }

    #[test]
    fn a_huge_message_keeps_its_start_and_the_data_its_room() {
        // An LLM's 1 MB answer, or a message repeating a 1 MB argument, with control characters
        // that escaping makes six times longer.
        let message = "é\u{1}".repeat(300_000);
        let data = json!({"query": "SELECT 1", "rows": [[1, "a"]]});
        let result = ToolResult::ok(message.clone(), data.clone()).capped(8 * 1024);
        let size = serde_json::to_string(&result).map(|s| s.len()).unwrap_or(usize::MAX);
        assert!(size <= 8 * 1024, "{size} bytes");
        assert_eq!(result.data, data, "the data had room");
        assert!(message.starts_with(result.message.split('…').next().unwrap_or_default()));
        let cuts = result.truncated.map(|t| t.cuts).unwrap_or_default();
        assert!(cuts.iter().any(|c| c.path == "message" && c.total == message.len()), "{cuts:?}");
    }

    #[test]
    fn a_huge_string_is_cut_on_a_character_boundary_and_recorded() {
        let big = "é".repeat(5_000_000);
        let result = ToolResult::ok("one value", json!({"items": [{"id": "a", "value": big}]}))
            .capped(64 * 1024);
        let size = json_size(&result);
        assert!(size <= 64 * 1024, "{size} bytes");
        let cut = &result.truncated.as_ref().expect("truncated").cuts[0];
        assert_eq!(
            (cut.path.as_str(), cut.total, cut.unit),
            ("data.items[0].value", 10_000_000, "bytes")
        );
        let kept = result.data["items"][0]["value"].as_str().expect("string");
        assert!(kept.ends_with('…') && kept.len() <= cut.kept + '…'.len_utf8(), "{}", kept.len());
        assert!(result.message.contains("cut to fit 64 KiB"), "{}", result.message);
    }

    #[test]
    fn the_largest_array_is_halved_until_it_fits_and_the_counts_say_so() {
        let rows: Vec<Value> = (0..1_000_000).map(|i| json!([i, format!("name {i}")])).collect();
        let result = ToolResult::ok(
            "rows",
            json!({"columns": ["id", "name"], "rows": rows, "rowCount": 1_000_000}),
        )
        .capped(256 * 1024);
        assert!(json_size(&result) <= 256 * 1024);
        let truncated = result.truncated.as_ref().expect("truncated");
        let cut = truncated.cuts.iter().find(|c| c.path == "data.rows").expect("rows cut");
        let kept = result.data["rows"].as_array().expect("rows").len();
        assert_eq!((cut.kept, cut.total, cut.unit), (kept, 1_000_000, "elements"));
        assert!(kept > 1_000, "kept only {kept} rows");
        assert_eq!(result.data["rows"][0], json!([0, "name 0"]), "the first rows are kept");
        assert_eq!(result.data["columns"], json!(["id", "name"]), "small parts are untouched");
        assert!(truncated.original_bytes > 10_000_000);
    }

    #[test]
    fn wide_objects_keep_their_first_members_and_deep_values_are_cut() {
        let wide: serde_json::Map<String, Value> =
            (0..100_000).map(|i| (format!("key{i}"), json!(i))).collect();
        let result = ToolResult::ok("wide", Value::Object(wide)).capped(16 * 1024);
        assert!(json_size(&result) <= 16 * 1024);
        let kept = result.data.as_object().expect("object");
        assert!(
            kept.len() > 100 && kept.contains_key("key0") && kept.contains_key("key99"),
            "{} members",
            kept.len()
        );
        let cut = &result.truncated.as_ref().expect("truncated").cuts[0];
        assert_eq!(
            (cut.path.as_str(), cut.kept, cut.total, cut.unit),
            ("data", kept.len(), 100_000, "members")
        );
        // A schema of 12,000 properties keeps its first properties, not nothing; the small
        // parts beside them are untouched.
        let properties: serde_json::Map<String, Value> =
            (0..12_000).map(|i| (format!("p{i}"), json!({"type": "integer"}))).collect();
        let required: Vec<String> = (0..12_000).map(|i| format!("p{i}")).collect();
        let schema = json!({"source": "s", "schema": {"type": "object", "properties": properties, "required": required}, "itemCount": 3});
        let result = ToolResult::ok("schema", schema).capped(64 * 1024);
        assert!(json_size(&result) <= 64 * 1024);
        let kept = result.data["schema"]["properties"].as_object().expect("properties");
        assert!(kept.len() > 1_000 && kept.contains_key("p0"), "{} properties", kept.len());
        assert_eq!(
            (result.data["source"].as_str(), result.data["itemCount"].as_u64()),
            (Some("s"), Some(3))
        );
        // `required` names only the properties kept: the cut schema describes what it lists.
        let required = result.data["schema"]["required"].as_array().expect("required");
        assert!(
            !required.is_empty()
                && required.iter().all(|name| kept.contains_key(name.as_str().expect("name"))),
            "{} required",
            required.len()
        );
        assert_eq!(
            result.data["schema"]["type"], "object",
            "a schema's few members are never halved"
        );
        let cuts = &result.truncated.as_ref().expect("truncated").cuts;
        assert!(
            cuts.iter().any(|cut| (cut.path.as_str(), cut.total, cut.unit)
                == ("data.schema.properties", 12_000, "members")),
            "{cuts:?}"
        );
        // As deep as parsed input can be (serde_json stops at 128 levels), and wide at each level.
        let mut deep = json!("leaf");
        for _ in 0..120 {
            deep = json!([deep, "x".repeat(200)]);
        }
        let result = ToolResult::ok("deep", deep).capped(16 * 1024);
        assert!(json_size(&result) <= 16 * 1024);
        assert!(result.truncated.is_some());
    }
}
