//! Small charts of what a strategy costs over time: DB connections, other
//! services' queries waiting and their latency (option C's bill), storage
//! PUTs and Slack posts (option D's).

use crate::ui::format;
use crate::ui::run::RunRef;
use crate::ui::svg::{Num, Svg};
use yew::prelude::*;

const WIDTH: f64 = 300.0;
const HEIGHT: f64 = 64.0;
const TOP: f64 = 6.0;

#[derive(Properties, PartialEq, Debug)]
pub struct ChartProps {
    pub run: RunRef,
    pub cursor_ms: u64,
}

/// One chart's data, drawn once per run.
struct Chart {
    id: &'static str,
    title: &'static str,
    caption: &'static str,
    path: String,
    /// A reference line (the connection limit), as a y.
    limit: Option<(f64, String)>,
    peak: String,
    values: Vec<f64>,
    unit: fn(f64) -> String,
    /// Buckets with failures, drawn as ✗ marks.
    marks: Vec<u32>,
}

impl Chart {
    /// The chart without its cursor, as SVG markup.
    fn markup(&self) -> AttrValue {
        let mut svg = Svg::new();
        svg.raw(format_args!(
            "<svg viewBox=\"0 0 {} {}\" aria-hidden=\"true\"><path class=\"area\" d=\"{}\"/>",
            Num(WIDTH),
            Num(HEIGHT),
            self.path
        ));
        if let Some((y, text)) = &self.limit {
            svg.line("limit", 0.0, *y, WIDTH, *y);
            svg.text(WIDTH - 2.0, (y - 2.0).max(8.0), "limit-label", Some("end"), text);
        }
        let count = self.values.len().max(1) as f64;
        for bucket in &self.marks {
            let x = (f64::from(*bucket) + 0.5) / count * WIDTH;
            svg.text(x, HEIGHT - 1.0, "fail-mark", Some("middle"), "✗");
        }
        svg.raw(format_args!("</svg>"));
        AttrValue::from(svg.finish())
    }
}

fn step_path(values: &[f64], top_value: f64) -> String {
    let count = values.len().max(1) as f64;
    let scale = if top_value > 0.0 { (HEIGHT - TOP) / top_value } else { 0.0 };
    let mut path = format!("M 0 {}", Num(HEIGHT));
    for (index, value) in values.iter().enumerate() {
        let x0 = index as f64 / count * WIDTH;
        let x1 = (index + 1) as f64 / count * WIDTH;
        let y = HEIGHT - value * scale;
        path.push_str(&format!(" L {} {} L {} {}", Num(x0), Num(y), Num(x1), Num(y)));
    }
    path.push_str(&format!(" L {} {} Z", Num(WIDTH), Num(HEIGHT)));
    path
}

fn count_text(value: f64) -> String {
    // Counts are whole numbers kept as f64 for the chart's scale.
    #[allow(clippy::cast_possible_truncation)]
    let whole = value.round() as i64;
    whole.to_string()
}

fn latency_text(value: f64) -> String {
    // Latencies are whole milliseconds well inside u64.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    format::duration(value as u64)
}

fn charts(run: &RunRef) -> Vec<Chart> {
    let series = &run.timeline.series;
    let max_connections = f64::from(run.scenario.world.db_max_connections);
    let connections: Vec<f64> = series.db_connections.iter().map(|value| f64::from(*value)).collect();
    let connection_top = connections.iter().copied().fold(max_connections, f64::max);
    let latency: Vec<f64> = series.background_latency_ms.iter().map(|value| *value as f64).collect();
    let bucket_ms = series.bucket_ms.max(1) as f64;
    let waiting: Vec<f64> = series.background_waiting_ms.iter().map(|value| *value as f64 / bucket_ms).collect();
    let pool = f64::from(run.scenario.world.background_pool_size);
    let waiting_top = waiting.iter().copied().fold(pool, f64::max);
    let latency_top = latency.iter().copied().fold(1.0, f64::max);
    let puts: Vec<f64> = series.puts_total.iter().map(|value| f64::from(*value)).collect();
    let posts: Vec<f64> = series.posts_total.iter().map(|value| f64::from(*value)).collect();
    let peak = |values: &[f64]| values.iter().copied().fold(0.0, f64::max);
    let failures: Vec<u32> = series
        .background_failures
        .iter()
        .enumerate()
        .filter(|(_, count)| **count > 0)
        .map(|(bucket, _)| u32::try_from(bucket).unwrap_or(0))
        .collect();
    let failed_total: u32 = series.background_failures.iter().sum();
    vec![
        Chart {
            id: "chart-connections",
            title: "DB connections open",
            caption: "Option C's bill: a session held in a transaction for the whole job, and other services' sessions queueing behind the row lock.",
            limit: Some((
                HEIGHT - max_connections * (HEIGHT - TOP) / connection_top,
                format!("limit {max_connections}"),
            )),
            path: step_path(&connections, connection_top),
            peak: format!("peak {}", count_text(peak(&connections))),
            values: connections,
            unit: count_text,
            marks: Vec::new(),
        },
        Chart {
            id: "chart-waiting",
            title: "Other services' queries waiting (average)",
            caption: "Option C's bill to everyone else: their inserts' foreign-key checks wait for FOR UPDATE, holding their connections; above their pool's size, every query queues for a connection (the post's \"connection pool starved\").",
            limit: Some((HEIGHT - pool * (HEIGHT - TOP) / waiting_top, format!("their pool {pool}"))),
            path: step_path(&waiting, waiting_top),
            peak: format!("peak {}", count_text(peak(&waiting))),
            values: waiting,
            unit: count_text,
            marks: Vec::new(),
        },
        Chart {
            id: "chart-latency",
            title: "Background query latency (slowest)",
            caption: "Other services' inserts into job_events take FOR KEY SHARE on the jobs row, which FOR UPDATE (not FOR NO KEY UPDATE) makes wait; their reads take no row lock. The log records a query only when it had to wait.",
            limit: None,
            path: step_path(&latency, latency_top),
            peak: format!("peak {} · {failed_total} failed", latency_text(peak(&latency))),
            values: latency,
            unit: latency_text,
            marks: failures,
        },
        Chart {
            id: "chart-puts",
            title: "Storage PUTs (total)",
            caption: "Option D's bill: without a lock every instance runs the job and uploads its chunks.",
            limit: None,
            path: step_path(&puts, peak(&puts).max(1.0)),
            peak: format!("total {}", count_text(peak(&puts))),
            values: puts,
            unit: count_text,
            marks: Vec::new(),
        },
        Chart {
            id: "chart-posts",
            title: "Slack posts (total)",
            caption: "A post cannot carry a fencing token: a duplicate run posts again.",
            limit: None,
            path: step_path(&posts, peak(&posts).max(1.0)),
            peak: format!("total {}", count_text(peak(&posts))),
            values: posts,
            unit: count_text,
            marks: Vec::new(),
        },
    ]
}

#[function_component(CostCharts)]
pub fn cost_charts(props: &ChartProps) -> Html {
    let charts = use_memo(props.run.clone(), |run| {
        charts(run).into_iter().map(|chart| (chart.markup(), chart)).collect::<Vec<_>>()
    });
    let series = &props.run.timeline.series;
    let duration = props.run.duration_ms().max(1);
    let x = props.cursor_ms.min(duration) as f64 / duration as f64 * WIDTH;
    let bucket = usize::try_from(props.cursor_ms / series.bucket_ms.max(1)).unwrap_or(0);
    let figures = charts.iter().map(|(markup, chart)| {
        let now = chart.values.get(bucket.min(chart.values.len().saturating_sub(1))).copied().unwrap_or(0.0);
        html! {
            <figure class="chart" id={chart.id}>
                <figcaption>
                    <span class="chart-title">{ chart.title }</span>
                    <span class="chart-now">{ format!("at cursor {} · {}", (chart.unit)(now), chart.peak) }</span>
                </figcaption>
                <div class="chart-plot">
                    { Html::from_html_unchecked(markup.clone()) }
                    <svg class="cursor-layer" viewBox={format!("0 0 {} {}", Num(WIDTH), Num(HEIGHT))} preserveAspectRatio="none" aria-hidden="true">
                        <line class="cursor" x1={Num(x).to_string()} x2={Num(x).to_string()} y1="0" y2={Num(HEIGHT).to_string()} />
                    </svg>
                </div>
                <p class="chart-caption">{ chart.caption }</p>
            </figure>
        }
    });
    html! { <div class="charts">{ for figures }</div> }
}
