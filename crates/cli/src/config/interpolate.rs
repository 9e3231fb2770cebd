//! `${VAR}` interpolation in configuration values, as Docker Compose and most MCP servers'
//! configs write it: `${VAR}` (an error when unset), `${VAR:-default}` (the default when unset
//! or empty), `${VAR-default}` (only when unset), and `$$` for a literal `$`. A `$` followed by
//! anything else stays as written, so a password such as `pa$word` needs no escaping.

/// Why a value could not be interpolated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum InterpolationError {
    /// `${NAME}` with `NAME` not set and no default.
    Unset(String),
    /// `${` without its `}`.
    Unclosed,
    /// `${}` or a name that is not `[A-Za-z_][A-Za-z0-9_]*`.
    BadName(String),
}

impl std::fmt::Display for InterpolationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unset(name) => write!(
                f,
                "environment variable `{name}` is not set (write ${{{name}:-default}} for a default)"
            ),
            Self::Unclosed => f.write_str("`${` without a closing `}`"),
            // The text is not repeated: it may be part of a password that holds `${`.
            Self::BadName(_) => f.write_str(
                "a `${…}` holds no variable name (letters, digits and `_`, not starting with a digit); write `$$` for a literal `$`",
            ),
        }
    }
}

/// `text` with every `${…}` replaced from `lookup` (the environment, in the program).
pub(crate) fn interpolate(
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, InterpolationError> {
    interpolate_escaped(text, lookup, &|value| value.to_string())
}

/// [`interpolate`] for a URI: a variable inside it (`postgres://app:${PW}@host/db`) is
/// percent-encoded, so a password with `@`, `/` or `:` stays the password and never spills into
/// the host or path that messages show; a value that is one variable alone (`${DATABASE_URL}`)
/// is a whole URI, taken as it is.
pub(crate) fn interpolate_uri(
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, InterpolationError> {
    // Where, in the URI as written, a variable would put text that must be encoded: in the
    // user info (between `://` and the last `@` of the authority) and in the query. A host,
    // port or path, or a variable holding the URI's start, is taken as it is.
    let Some(scheme_end) = text.find("://").map(|at| at + 3) else {
        return interpolate(text, lookup);
    };
    let authority_end =
        text[scheme_end..].find(['/', '?', '#']).map_or(text.len(), |at| scheme_end + at);
    let user_info_end = text[scheme_end..authority_end].rfind('@').map(|at| scheme_end + at);
    let query_start = text[scheme_end..].find('?').map(|at| scheme_end + at);
    let mut out = String::with_capacity(text.len());
    let mut start = 0;
    for (at, _) in text.match_indices("${") {
        if at < start {
            continue;
        }
        let Some(close) = text[at..].find('}').map(|c| at + c + 1) else { break };
        out.push_str(&interpolate(&text[start..at], lookup)?);
        let value = interpolate(&text[at..close], lookup)?;
        let secret_place = user_info_end.is_some_and(|end| at > scheme_end && at < end)
            || query_start.is_some_and(|q| at > q);
        out.push_str(&if secret_place { percent_encoded(&value) } else { value });
        start = close;
    }
    out.push_str(&interpolate(&text[start..], lookup)?);
    Ok(out)
}

/// `value` with every byte but RFC 3986's unreserved characters percent-encoded.
pub(crate) fn percent_encoded(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

fn interpolate_escaped(
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
    escape: &dyn Fn(&str) -> String,
) -> Result<String, InterpolationError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some(inner) = after.strip_prefix('{') {
            let close = inner.find('}').ok_or(InterpolationError::Unclosed)?;
            out.push_str(&escape(&expand(&inner[..close], lookup)?));
            rest = &inner[close + 1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// One `${…}` body: `NAME`, `NAME:-default` or `NAME-default`.
fn expand(
    body: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, InterpolationError> {
    let (name, default, empty_is_unset) = match body.find([':', '-']) {
        Some(at) if body[at..].starts_with(":-") => (&body[..at], Some(&body[at + 2..]), true),
        Some(at) if body[at..].starts_with('-') => (&body[..at], Some(&body[at + 1..]), false),
        _ => (body, None, false),
    };
    let valid = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err(InterpolationError::BadName(body.to_string()));
    }
    match (lookup(name), default) {
        (Some(value), Some(default)) if value.is_empty() && empty_is_unset => Ok(default.into()),
        (Some(value), _) => Ok(value),
        (None, Some(default)) => Ok(default.into()),
        (None, None) => Err(InterpolationError::Unset(name.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "USER_NAME" => Some("ana".into()),
            "EMPTY" => Some(String::new()),
            "BRACED" => Some("${USER_NAME}".into()),
            _ => None,
        }
    }

    fn run(text: &str) -> Result<String, InterpolationError> {
        interpolate(text, &env)
    }

    #[test]
    fn variables_defaults_and_escapes() {
        assert_eq!(run("postgres://${USER_NAME}@h/db").as_deref(), Ok("postgres://ana@h/db"));
        assert_eq!(run("${MISSING:-5432}").as_deref(), Ok("5432"));
        assert_eq!(run("${EMPTY:-x}").as_deref(), Ok("x"));
        assert_eq!(run("${EMPTY-x}").as_deref(), Ok(""));
        assert_eq!(run("${MISSING-}").as_deref(), Ok(""));
        assert_eq!(run("${MISSING:-a-b:c}").as_deref(), Ok("a-b:c"));
        assert_eq!(run("pa$word $$ $${USER_NAME} $").as_deref(), Ok("pa$word $ ${USER_NAME} $"));
        // A value is not interpolated again: a password may contain `${`.
        assert_eq!(run("${BRACED}").as_deref(), Ok("${USER_NAME}"));
        assert_eq!(run("plain").as_deref(), Ok("plain"));
        assert_eq!(run("ünïcödé ${USER_NAME}ü").as_deref(), Ok("ünïcödé anaü"));
    }

    #[test]
    fn a_variable_inside_a_uri_is_percent_encoded_and_a_whole_uri_is_not() {
        let env = |name: &str| match name {
            "PW" => Some("Zq7:s3cr/t@pw%x".to_string()),
            "URL" => Some("postgres://u:p%40ss@h/db".to_string()),
            "HOST" => Some("db.internal".to_string()),
            _ => None,
        };
        assert_eq!(
            interpolate_uri("postgres://app:${PW}@${HOST}:5432/db?password=${PW}", &env).as_deref(),
            Ok(
                "postgres://app:Zq7%3As3cr%2Ft%40pw%25x@db.internal:5432/db?password=Zq7%3As3cr%2Ft%40pw%25x"
            )
        );
        assert_eq!(interpolate_uri("${URL}", &env).as_deref(), Ok("postgres://u:p%40ss@h/db"));
        // Host, port, path and a variable holding the URI's start are not encoded.
        let env = |name: &str| match name {
            "HP" => Some("127.0.0.1:54329".to_string()),
            "DB" => Some("chinook".to_string()),
            "BASE" => Some("postgres://u@h".to_string()),
            "PW" => Some("a/b".to_string()),
            _ => None,
        };
        assert_eq!(
            interpolate_uri("postgres://u:${PW}@${HP}/${DB}?sslmode=${PW}", &env).as_deref(),
            Ok("postgres://u:a%2Fb@127.0.0.1:54329/chinook?sslmode=a%2Fb")
        );
        assert_eq!(
            interpolate_uri("${BASE}/chinook", &env).as_deref(),
            Ok("postgres://u@h/chinook")
        );
    }

    #[test]
    fn unset_unclosed_and_bad_names_are_errors() {
        assert_eq!(run("${MISSING}"), Err(InterpolationError::Unset("MISSING".into())));
        assert_eq!(run("x ${USER_NAME"), Err(InterpolationError::Unclosed));
        assert_eq!(run("${}"), Err(InterpolationError::BadName(String::new())));
        assert!(!run("S3kr${1tVal}").unwrap_err().to_string().contains("1tVal"));
        assert_eq!(run("${1X}"), Err(InterpolationError::BadName("1X".into())));
        assert_eq!(run("${A B}"), Err(InterpolationError::BadName("A B".into())));
        assert!(run("${MISSING}").unwrap_err().to_string().contains("MISSING:-default"));
    }
}
