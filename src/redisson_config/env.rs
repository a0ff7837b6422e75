//! `${NAME}` / `${NAME:-default}` substitution in the file's text, done before parsing, as
//! Redisson's `ConfigSupport` does it.

/// Redisson's `${NAME}` / `${NAME:-default}` substitution (`ConfigSupport.resolveEnvParams`):
/// every match in the original text, in order, has all its occurrences replaced in the text
/// so far; an unset variable without a default is left as written.
pub(super) fn substitute_env(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = text.to_owned();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i + 1 < bytes.len() {
        if !(bytes[i] == b'$' && bytes[i + 1] == b'{') {
            i += 1;
            continue;
        }
        match env_match(text, i) {
            Some((end, inner)) => {
                let whole = &text[i..end];
                let parts = java_split(inner, ":-");
                let value = lookup(parts[0]);
                if let Some(v) = value {
                    out = out.replace(whole, &v);
                } else if parts.len() == 2 {
                    out = out.replace(whole, parts[1]);
                }
                i = end;
            }
            None => i += 1,
        }
    }
    out
}

/// Matches `\$\{([\w.]+(:-.+?)?)\}` at `start`; returns the end and group 1.
fn env_match(text: &str, start: usize) -> Option<(usize, &str)> {
    let b = text.as_bytes();
    let name_start = start + 2;
    let mut j = name_start;
    while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_' || b[j] == b'.') {
        j += 1;
    }
    if j == name_start || j >= b.len() {
        return None;
    }
    if b[j] == b'}' {
        return Some((j + 1, &text[name_start..j]));
    }
    if !text[j..].starts_with(":-") {
        return None;
    }
    // `.+?\}`: at least one character other than a line terminator, then the first `}`.
    let default_start = j + 2;
    let mut chars = text[default_start..].char_indices();
    let (_, first) = chars.next()?;
    if first == '\n' || first == '\r' {
        return None;
    }
    for (off, c) in chars {
        match c {
            '}' => return Some((default_start + off + 1, &text[name_start..default_start + off])),
            '\n' | '\r' => return None,
            _ => {}
        }
    }
    None
}

/// Java's `String.split(sep)`: trailing empty strings removed.
fn java_split<'s>(s: &'s str, sep: &str) -> Vec<&'s str> {
    let mut parts: Vec<&str> = s.split(sep).collect();
    while parts.len() > 1 && parts.last().is_some_and(|p| p.is_empty()) {
        parts.pop();
    }
    parts
}
