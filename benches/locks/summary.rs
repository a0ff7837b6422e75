//! `summary.json`: the committed digest of a run. The same tree as the raw `raw/results.json`
//! (git-ignored) without the per-iteration samples: every count, pooled p50 / p99, ratio and
//! per-repeat figure (the per-repeat p50s, ops/s and CPU the report's spreads come from) stays,
//! rounded to 4 significant digits, one line per measurement, so that a run's diff reads as the
//! numbers that moved.

use serde_json::Value;

/// Keys whose values are per-iteration samples: left to `raw/results.json`.
const RAW_ONLY: &[&str] = &["samples"];

/// The summary of `results` (the raw run tree), as the text of `summary.json`.
pub(crate) fn summary_json(results: &Value) -> String {
    let mut out = String::new();
    write(&digest(results), 0, &mut out);
    out.push('\n');
    out
}

/// `v` without the raw-only keys, floats rounded to 4 significant digits.
fn digest(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !RAW_ONLY.contains(&k.as_str()))
                .map(|(k, x)| (k.clone(), digest(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(digest).collect()),
        Value::Number(n) if n.is_f64() => {
            let x = n.as_f64().unwrap_or(f64::NAN);
            let r = format!("{x:.3e}").parse::<f64>().unwrap_or(x);
            serde_json::Number::from_f64(r).map_or(Value::Null, Value::Number)
        }
        other => other.clone(),
    }
}

/// Whether `v` goes on one line: a scalar, or an object / array of scalars and arrays of
/// scalars (a measurement's p50, p99, n and per-repeat figures; a command count table).
fn flat(v: &Value) -> bool {
    let scalar = |x: &Value| !matches!(x, Value::Object(_) | Value::Array(_));
    let leaf = |x: &Value| match x {
        Value::Array(a) => a.iter().all(scalar),
        Value::Object(_) => false,
        _ => true,
    };
    match v {
        Value::Object(m) => m.values().all(leaf),
        Value::Array(a) => a.iter().all(leaf),
        _ => true,
    }
}

fn write(v: &Value, indent: usize, out: &mut String) {
    if flat(v) {
        inline(v, out);
        return;
    }
    let pad = "  ".repeat(indent + 1);
    let (open, close) = if v.is_object() { ('{', '}') } else { ('[', ']') };
    out.push(open);
    let mut first = true;
    let mut item = |key: Option<&str>, x: &Value, out: &mut String| {
        out.push_str(if first { "\n" } else { ",\n" });
        first = false;
        out.push_str(&pad);
        if let Some(k) = key {
            out.push_str(&Value::String(k.to_owned()).to_string());
            out.push_str(": ");
        }
        write(x, indent + 1, out);
    };
    match v {
        Value::Object(m) => m.iter().for_each(|(k, x)| item(Some(k), x, out)),
        Value::Array(a) => a.iter().for_each(|x| item(None, x, out)),
        _ => unreachable!("scalars are flat"),
    }
    out.push('\n');
    out.push_str(&"  ".repeat(indent));
    out.push(close);
}

/// `v` on one line, with a space after `,` and `:`.
fn inline(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push_str(": ");
                inline(x, out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                inline(x, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}
