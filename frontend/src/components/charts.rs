//! Small charts of what a strategy costs over time: DB connections and
//! background-query latency (option C's bill), storage PUTs and Slack posts
//! (option D's).

use crate::format;
use crate::lab::RunRef;
use std::rc::Rc;
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

fn step_path(values: &[f64], top_value: f64) -> String {
    let count = values.len().max(1) as f64;
    let scale = if top_value > 0.0 { (HEIGHT - TOP) / top_value } else { 0.0 };
    let mut path = format!("M 0 {HEIGHT}");
    for (index, value) in values.iter().enumerate() {
        let x0 = index as f64 / count * WIDTH;
        let x1 = (index + 1) as f64 / count * WIDTH;
        let y = HEIGHT - value * scale;
        path.push_str(&format!(" L {x0:.1} {y:.1} L {x1:.1} {y:.1}"));
    }
    path.push_str(&format!(" L {WIDTH} {HEIGHT} Z"));
    path
}

fn count_text(value: f64) -> String {
    format!("{value:.0}")
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
            id: "chart-latency",
            title: "Background query latency (slowest)",
            caption: "Other services' INSERTs into job_events take FOR KEY SHARE on the jobs row; FOR UPDATE makes them wait.",
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
    let charts: Rc<Vec<Chart>> = use_memo(props.run.clone(), |run| charts(run));
    let series = &props.run.timeline.series;
    let duration = props.run.duration_ms().max(1);
    let x = props.cursor_ms.min(duration) as f64 / duration as f64 * WIDTH;
    let bucket = usize::try_from(props.cursor_ms / series.bucket_ms.max(1)).unwrap_or(0);
    let figures = charts.iter().map(|chart| {
        let now = chart
            .values
            .get(bucket.min(chart.values.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0.0);
        let count = chart.values.len().max(1) as f64;
        html! {
            <figure class="chart" id={chart.id}>
                <figcaption>
                    <span class="chart-title">{ chart.title }</span>
                    <span class="chart-now">{ format!("at cursor {} · {}", (chart.unit)(now), chart.peak) }</span>
                </figcaption>
                <svg viewBox={format!("0 0 {WIDTH} {HEIGHT}")} aria-hidden="true">
                    <path class="area" d={chart.path.clone()} />
                    if let Some((y, text)) = &chart.limit {
                        <line class="limit" x1="0" x2={WIDTH.to_string()} y1={format!("{y:.1}")} y2={format!("{y:.1}")} />
                        <text class="limit-label" x={(WIDTH - 2.0).to_string()} y={format!("{:.1}", (y - 2.0).max(8.0))} text-anchor="end">{ text.clone() }</text>
                    }
                    { for chart.marks.iter().map(|bucket| {
                        let mark_x = (f64::from(*bucket) + 0.5) / count * WIDTH;
                        html! { <text class="fail-mark" x={format!("{mark_x:.1}")} y={(HEIGHT - 1.0).to_string()} text-anchor="middle">{"✗"}</text> }
                    }) }
                    <line class="cursor" x1={format!("{x:.1}")} x2={format!("{x:.1}")} y1="0" y2={HEIGHT.to_string()} />
                </svg>
                <p class="chart-caption">{ chart.caption }</p>
            </figure>
        }
    });
    html! { <div class="charts">{ for figures }</div> }
}
