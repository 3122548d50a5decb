//! The picture of a measured rollout: pods per revision and unavailable pods over time, as an SVG chart (no
//! plotting library: a few lines, axes and a legend) and the same samples as CSV, written next to each other
//! by the measurement scenarios when `KRUISE_E2E_MEASURE_PLOT` names the SVG file.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};

/// The counts at one moment of a rollout.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Seconds since the measurement started.
    pub seconds: f64,
    /// Pods at the old revision.
    pub old: usize,
    /// Pods at the new revision.
    pub new: usize,
    /// Pods not Ready (either revision).
    pub unavailable: usize,
}

/// Samples taken as events arrive, at most one per `step`: the last counts of each step are kept.
pub struct Timeline {
    started: Instant,
    step: Duration,
    samples: Vec<Sample>,
}

impl Timeline {
    /// An empty timeline whose time 0 is `started`.
    pub fn new(started: Instant, step: Duration) -> Self {
        Self {
            started,
            step,
            samples: Vec::new(),
        }
    }

    /// Records the counts at `now`; replaces the last sample when it is less than a step older.
    pub fn record(&mut self, now: Instant, old: usize, new: usize, unavailable: usize) {
        let sample = Sample {
            seconds: now.saturating_duration_since(self.started).as_secs_f64(),
            old,
            new,
            unavailable,
        };
        match self.samples.last_mut() {
            Some(last) if sample.seconds - last.seconds < self.step.as_secs_f64() => {
                // Keep the step's first time, so that the line does not lean.
                *last = Sample {
                    seconds: last.seconds,
                    ..sample
                };
            }
            _ => self.samples.push(sample),
        }
    }

    /// The samples, oldest first.
    pub fn samples(&self) -> &[Sample] {
        &self.samples
    }

    /// Seconds from time 0 to `at`.
    pub fn seconds_at(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.started).as_secs_f64()
    }
}

/// What the chart says besides its samples.
pub struct Chart<'a> {
    /// The title line.
    pub title: &'a str,
    /// The names of the old and new revisions (legend).
    pub old_label: &'a str,
    /// See `old_label`.
    pub new_label: &'a str,
    /// Vertical markers: (seconds, label).
    pub markers: &'a [(f64, &'a str)],
}

const WIDTH: f64 = 760.0;
const HEIGHT: f64 = 380.0;
const LEFT: f64 = 60.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 64.0;
const BOTTOM: f64 = 50.0;

/// Which count of a sample a line draws.
type Count = fn(&Sample) -> usize;

const OLD_COLOUR: &str = "#1f77b4";
const NEW_COLOUR: &str = "#2ca02c";
const UNAVAILABLE_COLOUR: &str = "#d62728";

/// A step no smaller than `range / 8` among 1, 2 and 5 times a power of ten (axis ticks).
fn tick_step(range: f64) -> f64 {
    let rough = (range / 8.0).max(f64::MIN_POSITIVE);
    let power = 10_f64.powf(rough.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|factor| factor * power)
        .find(|step| *step >= rough)
        .unwrap_or(10.0 * power)
}

/// Escapes text for SVG.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The chart as an SVG document: one line per count, the time on the x axis, pods on the y axis.
pub fn svg(chart: &Chart<'_>, samples: &[Sample]) -> String {
    let max_seconds = samples
        .iter()
        .map(|sample| sample.seconds)
        .chain(chart.markers.iter().map(|(seconds, _)| *seconds))
        .fold(1.0_f64, f64::max);
    let max_pods = samples
        .iter()
        .map(|sample| sample.old.max(sample.new).max(sample.unavailable))
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let plot_width = WIDTH - LEFT - RIGHT;
    let plot_height = HEIGHT - TOP - BOTTOM;
    let x = |seconds: f64| LEFT + seconds / max_seconds * plot_width;
    let y = |pods: f64| TOP + plot_height - pods / max_pods * plot_height;

    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        out,
        r#"<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>"#
    );
    let _ = writeln!(
        out,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="14">{}</text>"#,
        WIDTH / 2.0,
        escape(chart.title)
    );
    // Grid and ticks.
    let x_step = tick_step(max_seconds);
    let mut tick = 0.0;
    while tick <= max_seconds + f64::EPSILON {
        let _ = writeln!(
            out,
            r##"<line x1="{0:.1}" y1="{TOP}" x2="{0:.1}" y2="{1}" stroke="#e0e0e0"/><text x="{0:.1}" y="{2}" text-anchor="middle">{3}</text>"##,
            x(tick),
            TOP + plot_height,
            TOP + plot_height + 16.0,
            tick
        );
        tick += x_step;
    }
    let y_step = tick_step(max_pods);
    let mut tick = 0.0;
    while tick <= max_pods + f64::EPSILON {
        let _ = writeln!(
            out,
            r##"<line x1="{LEFT}" y1="{0:.1}" x2="{1}" y2="{0:.1}" stroke="#e0e0e0"/><text x="{2}" y="{3:.1}" text-anchor="end">{4}</text>"##,
            y(tick),
            LEFT + plot_width,
            LEFT - 6.0,
            y(tick) + 4.0,
            tick
        );
        tick += y_step;
    }
    let _ = writeln!(
        out,
        r##"<rect x="{LEFT}" y="{TOP}" width="{plot_width}" height="{plot_height}" fill="none" stroke="#888"/>"##
    );
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" text-anchor="middle">seconds</text>"#,
        LEFT + plot_width / 2.0,
        HEIGHT - 12.0
    );
    let _ = writeln!(
        out,
        r#"<text x="16" y="{}" text-anchor="middle" transform="rotate(-90 16 {})">pods</text>"#,
        TOP + plot_height / 2.0,
        TOP + plot_height / 2.0
    );
    for (index, (seconds, label)) in chart.markers.iter().enumerate() {
        // Labels of markers in the right quarter go to the left of their line, so they stay inside.
        let (label_x, anchor) = if *seconds > max_seconds * 0.75 {
            (x(*seconds) - 4.0, "end")
        } else {
            (x(*seconds) + 4.0, "start")
        };
        let _ = writeln!(
            out,
            r##"<line x1="{0:.1}" y1="{TOP}" x2="{0:.1}" y2="{1}" stroke="#555" stroke-dasharray="4 3"/><text x="{2:.1}" y="{3}" fill="#555" text-anchor="{anchor}">{4}</text>"##,
            x(*seconds),
            TOP + plot_height,
            label_x,
            TOP + 14.0 + 14.0 * index as f64,
            escape(label)
        );
    }
    let series: [(&str, &str, Count); 3] = [
        (chart.old_label, OLD_COLOUR, |sample| sample.old),
        (chart.new_label, NEW_COLOUR, |sample| sample.new),
        ("unavailable", UNAVAILABLE_COLOUR, |sample| {
            sample.unavailable
        }),
    ];
    for (index, (label, colour, count)) in series.iter().enumerate() {
        // A step line: a count holds until the next sample changes it.
        let mut points: Vec<String> = Vec::with_capacity(samples.len() * 2);
        let mut previous: Option<usize> = None;
        for sample in samples {
            let value = count(sample);
            if let Some(held) = previous {
                points.push(format!("{:.1},{:.1}", x(sample.seconds), y(held as f64)));
            }
            points.push(format!("{:.1},{:.1}", x(sample.seconds), y(value as f64)));
            previous = Some(value);
        }
        let _ = writeln!(
            out,
            r#"<polyline fill="none" stroke="{colour}" stroke-width="2" points="{}"/>"#,
            points.join(" ")
        );
        // The legend: one row between the title and the plot.
        let legend_y = 44.0;
        let legend_x = LEFT + 190.0 * index as f64;
        let _ = writeln!(
            out,
            r#"<line x1="{legend_x}" y1="{0}" x2="{1}" y2="{0}" stroke="{colour}" stroke-width="3"/><text x="{2}" y="{3}">{4}</text>"#,
            legend_y,
            legend_x + 20.0,
            legend_x + 26.0,
            legend_y + 4.0,
            escape(label)
        );
    }
    out.push_str("</svg>\n");
    out
}

/// The samples as CSV: `seconds,old,new,unavailable`.
pub fn csv(samples: &[Sample]) -> String {
    let mut out = String::from("seconds,old,new,unavailable\n");
    for sample in samples {
        let _ = writeln!(
            out,
            "{:.3},{},{},{}",
            sample.seconds, sample.old, sample.new, sample.unavailable
        );
    }
    out
}

/// Writes the chart to the file `KRUISE_E2E_MEASURE_PLOT` names (and the CSV next to it, `.csv`); `None`
/// when the variable is not set.
pub fn write_if_asked(chart: &Chart<'_>, samples: &[Sample]) -> Result<Option<PathBuf>> {
    let Some(path) = std::env::var_os("KRUISE_E2E_MEASURE_PLOT").map(PathBuf::from) else {
        return Ok(None);
    };
    if let Some(directory) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(directory)
            .with_context(|| format!("creating {}", directory.display()))?;
    }
    std::fs::write(&path, svg(chart, samples))
        .with_context(|| format!("writing {}", path.display()))?;
    let csv_path = path.with_extension("csv");
    std::fs::write(&csv_path, csv(samples))
        .with_context(|| format!("writing {}", csv_path.display()))?;
    Ok(Some(path))
}
