//! The handoff plot (`handoff.svg`): p50/p99 handoff latency against the waiters, log-log.

use std::fmt::Write as _;

use crate::stats::us;

/// One line of the handoff plot: a system's name and its (waiters, p50 µs, p99 µs) points.
pub(crate) type PlotSeries = (String, Vec<(usize, f64, f64)>);

pub(crate) fn svg_plot(series: &[PlotSeries], target_us: f64) -> String {
    let (w, h) = (720.0, 440.0);
    let (l, r, t, b) = (80.0, 180.0, 40.0, 60.0);
    let pw = w - l - r;
    let ph = h - t - b;
    let ys: Vec<f64> = series
        .iter()
        .flat_map(|s| s.1.iter().flat_map(|p| [p.1, p.2]))
        .chain([target_us])
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect();
    let ymin = ys.iter().copied().fold(f64::INFINITY, f64::min).max(1.0);
    let ymax = ys.iter().copied().fold(0.0, f64::max).max(ymin * 10.0);
    let (lo, hi) = (ymin.log10().floor(), ymax.log10().ceil());
    assert!(
        lo.is_finite() && hi.is_finite(),
        "svg_plot needs finite values (got {ymin}..{ymax})"
    );
    let x_of = |wn: usize| l + pw * ((wn as f64).log10() / 3.0);
    let y_of = |v: f64| t + ph * (1.0 - (v.log10() - lo) / (hi - lo));
    let colors = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd"];
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="15">Handoff latency vs waiters (one hot key; solid p50, dashed p99)</text>"#,
        l + pw / 2.0
    );
    // grid
    let mut e = lo;
    while e <= hi {
        let v = 10f64.powf(e);
        let y = y_of(v);
        let _ = writeln!(
            s,
            r##"<line x1="{l}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/>"##,
            l + pw
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            l - 6.0,
            y + 4.0,
            us(v)
        );
        e += 1.0;
    }
    for wn in [1usize, 10, 100, 1000] {
        let x = x_of(wn);
        let _ = writeln!(
            s,
            r##"<line x1="{x:.1}" y1="{t}" x2="{x:.1}" y2="{:.1}" stroke="#ddd"/>"##,
            t + ph
        );
        let _ = writeln!(
            s,
            r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{wn}</text>"#,
            t + ph + 18.0
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">waiters (log scale)</text>"#,
        l + pw / 2.0,
        h - 15.0
    );
    let _ = writeln!(
        s,
        r#"<text x="18" y="{:.1}" text-anchor="middle" transform="rotate(-90 18 {:.1})">latency (log scale)</text>"#,
        t + ph / 2.0,
        t + ph / 2.0
    );
    let _ = writeln!(
        s,
        r##"<rect x="{l}" y="{t}" width="{pw}" height="{ph}" fill="none" stroke="#444"/>"##
    );
    // target
    let ty = y_of(target_us);
    let _ = writeln!(
        s,
        r##"<line x1="{l}" y1="{ty:.1}" x2="{:.1}" y2="{ty:.1}" stroke="#ff7f0e" stroke-dasharray="2,3" stroke-width="1.5"/>"##,
        l + pw
    );
    for (i, (name, pts)) in series.iter().enumerate() {
        let c = colors[i % colors.len()];
        for (k, dash) in [(1usize, ""), (2, r#" stroke-dasharray="6,4""#)] {
            let path: Vec<String> = pts
                .iter()
                .filter(|p| (if k == 1 { p.1 } else { p.2 }).is_finite())
                .map(|p| format!("{:.1},{:.1}", x_of(p.0), y_of(if k == 1 { p.1 } else { p.2 })))
                .collect();
            if !path.is_empty() {
                let _ = writeln!(
                    s,
                    r#"<polyline points="{}" fill="none" stroke="{c}" stroke-width="2"{dash}/>"#,
                    path.join(" ")
                );
            }
        }
        for p in pts.iter().filter(|p| p.1.is_finite()) {
            let _ = writeln!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{c}"/>"#,
                x_of(p.0),
                y_of(p.1)
            );
        }
        let ly = t + 20.0 + 22.0 * i as f64;
        let _ = writeln!(
            s,
            r#"<line x1="{:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{c}" stroke-width="2"/>"#,
            l + pw + 12.0,
            l + pw + 36.0
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}">{name}</text>"#,
            l + pw + 42.0,
            ly + 4.0
        );
    }
    let ly = t + 20.0 + 22.0 * series.len() as f64;
    let _ = writeln!(
        s,
        r##"<line x1="{:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="#ff7f0e" stroke-dasharray="2,3" stroke-width="1.5"/>"##,
        l + pw + 12.0,
        l + pw + 36.0
    );
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}">target p50</text>"#,
        l + pw + 42.0,
        ly + 4.0
    );
    s.push_str("</svg>\n");
    s
}
