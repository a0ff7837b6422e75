//! Statistics over the samples (percentiles, per-repeat distributions, ratios) and the number
//! formatting the report uses.

use serde_json::{json, Value};

pub(crate) fn sorted(v: &[f64]) -> Vec<f64> {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap());
    s
}

pub(crate) fn pct(v: &[f64], q: f64) -> f64 {
    let s = sorted(v);
    if s.is_empty() {
        return f64::NAN;
    }
    let idx = ((s.len() - 1) as f64 * q).round() as usize;
    s[idx]
}

pub(crate) fn p50(v: &[f64]) -> f64 {
    pct(v, 0.50)
}

pub(crate) fn p99(v: &[f64]) -> f64 {
    pct(v, 0.99)
}

pub(crate) fn minmax(v: &[f64]) -> (f64, f64) {
    let s = sorted(v);
    match (s.first(), s.last()) {
        (Some(a), Some(b)) => (*a, *b),
        _ => (f64::NAN, f64::NAN),
    }
}

/// Samples (µs) per repeat; pooled percentiles plus per-repeat p50s.
#[derive(Default, Clone)]
pub(crate) struct Dist {
    rounds: Vec<Vec<f64>>,
}

impl Dist {
    pub(crate) fn push_round(&mut self, r: Vec<f64>) {
        self.rounds.push(r);
    }
    pub(crate) fn all(&self) -> Vec<f64> {
        self.rounds.iter().flatten().copied().collect()
    }
    pub(crate) fn p50(&self) -> f64 {
        p50(&self.all())
    }
    pub(crate) fn p99(&self) -> f64 {
        p99(&self.all())
    }
    pub(crate) fn round_p50s(&self) -> Vec<f64> {
        self.rounds.iter().map(|r| p50(r)).collect()
    }
    pub(crate) fn json(&self) -> Value {
        json!({
            "unit": "us",
            "n": self.all().len(),
            "p50": self.p50(),
            "p99": self.p99(),
            "round_p50": self.round_p50s(),
            "samples": self
                .rounds
                .iter()
                .map(|r| r.iter().map(|x| (x * 10.0).round() / 10.0).collect::<Vec<f64>>())
                .collect::<Vec<_>>(),
        })
    }
    pub(crate) fn is_empty(&self) -> bool {
        self.rounds.iter().all(|r| r.is_empty())
    }
}

/// The median of the per-repeat p50 ratios (each repeat pairs measurements taken close together,
/// so a burst of noise on a shared machine moves one pair, not the verdict), and their min–max.
pub(crate) fn ratio(ours: &Dist, base: &Dist) -> (f64, f64, f64) {
    let a = ours.round_p50s();
    let b = base.round_p50s();
    paired(&a, &b)
}

/// Median and min–max of `a[i] / b[i]`.
pub(crate) fn paired(a: &[f64], b: &[f64]) -> (f64, f64, f64) {
    let per: Vec<f64> = a.iter().zip(b.iter()).map(|(x, y)| x / y).collect();
    let (lo, hi) = minmax(&per);
    (p50(&per), lo, hi)
}

pub(crate) fn fmt_ratio((r, lo, hi): (f64, f64, f64)) -> String {
    if !r.is_finite() {
        return "n/a".into();
    }
    // two decimals, or three significant digits for small ratios
    let p = |x: f64| {
        if x.abs() < 0.1 {
            let digits = (2 - x.abs().log10().floor() as i32).clamp(2, 6) as usize;
            format!("{x:.digits$}")
        } else {
            format!("{x:.2}")
        }
    };
    if lo.is_finite() && hi.is_finite() && (hi - lo) > 0.0 {
        format!("{}× ({}–{})", p(r), p(lo), p(hi))
    } else {
        format!("{}×", p(r))
    }
}

pub(crate) fn us(x: f64) -> String {
    if !x.is_finite() {
        "n/a".into()
    } else if x >= 10_000.0 {
        format!("{:.1} ms", x / 1000.0)
    } else if x >= 1000.0 {
        format!("{:.2} ms", x / 1000.0)
    } else {
        format!("{x:.0} µs")
    }
}

/// Our lock + unlock throughput against the raw EVALSHA pairs', at every concurrency.
pub(crate) const THROUGHPUT_TARGET: f64 = 0.95;

pub(crate) fn verdict(ok: bool) -> &'static str {
    if ok {
        "meets"
    } else {
        "**misses**"
    }
}

pub(crate) fn fmt_s(s: f64) -> String {
    if s < 1.0 {
        format!("{:.0} ms", s * 1e3)
    } else {
        format!("{s:.2} s")
    }
}

pub(crate) fn ratio_pooled(a: &Dist, b: &Dist) -> (f64, f64, f64) {
    (a.p50() / b.p50(), f64::NAN, f64::NAN)
}
