//! The report's charts: `plotters` drawing into SVG strings, each then given an SVG
//! `<title>` (plotters writes none) so screen readers and tooltips name it.
//!
//! Every chart has its legend in a panel to the right of the plot, drawn by us with
//! plotters elements, so that a legend never covers data however many series there are.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Paul Tol's "muted" scheme (colour-blind safe, legible on white), ordered so that
/// neighbouring series differ most in hue and lightness.
pub const PALETTE: [RGBColor; 9] = [
    RGBColor(0x33, 0x22, 0x88), // indigo
    RGBColor(0xCC, 0x66, 0x77), // rose
    RGBColor(0x44, 0xAA, 0x99), // teal
    RGBColor(0xDD, 0xCC, 0x77), // sand
    RGBColor(0x88, 0x22, 0x55), // wine
    RGBColor(0x88, 0xCC, 0xEE), // cyan
    RGBColor(0x11, 0x77, 0x33), // green
    RGBColor(0xAA, 0x44, 0x99), // purple
    RGBColor(0x99, 0x99, 0x33), // olive
];

const WIDTH: u32 = 1100;
const LEGEND_W: u32 = 300;
const FONT: &str = "sans-serif";

/// One named series: a value (or a gap) per x position / category.
#[derive(Clone, Debug)]
pub struct Series {
    pub name: String,
    pub values: Vec<Option<f64>>,
}

/// A value axis: its label (with the unit) and range.
#[derive(Clone, Debug)]
pub struct Axis {
    pub label: String,
    pub max: f64,
    /// Decimals of the values written on bars (e.g. 2 for 0-1 scores).
    pub decimals: usize,
}

impl Axis {
    /// Decimals of the tick labels: whole numbers on a 0-100 scale, tenths on a 0-1 one.
    fn tick_decimals(&self) -> usize {
        if self.max > 10.0 {
            0
        } else {
            1
        }
    }
}

/// Series `i`'s colour: the palette, then (past 9 series) the same hues lighter, so that
/// bars, which have no marker, still differ.
fn colour(i: usize) -> RGBAColor {
    let alpha = match i / PALETTE.len() {
        0 => 1.0,
        1 => 0.5,
        _ => 0.25,
    };
    PALETTE[i % PALETTE.len()].mix(alpha)
}

/// Tall enough for the legend's rows.
fn fit_legend(height: u32, series: usize) -> u32 {
    height.max(70 + 26 * series as u32)
}

type Err = String;

fn e<E: std::fmt::Debug>(err: E) -> Err {
    format!("drawing a chart failed: {err:?}")
}

/// A line chart: x is an integer position (turn, session), one line per series. Lines differ
/// by colour, marker shape and (every other series) dashes, so they stay apart in grey print.
pub fn lines(
    title: &str,
    x_label: &str,
    xs: &[u64],
    y: &Axis,
    series: &[Series],
) -> Result<String, Err> {
    let height = fit_legend(460, series.len());
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        let (plot, legend) = root.split_horizontally(WIDTH - LEGEND_W);
        let x_max = xs.iter().copied().max().unwrap_or(0).max(1) as f64;
        let x_min = xs.iter().copied().min().unwrap_or(0) as f64;
        let mut chart = ChartBuilder::on(&plot)
            .caption(title, (FONT, 22).into_font())
            .margin(12)
            .x_label_area_size(52)
            .y_label_area_size(70)
            .build_cartesian_2d(x_min - 0.3..x_max + 0.3, 0f64..y.max * 1.04)
            .map_err(e)?;
        let n_x = xs.len().clamp(2, 21);
        let dec = y.tick_decimals();
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc(y.label.as_str())
            .x_labels(n_x)
            .x_label_formatter(&|v| {
                if (v - v.round()).abs() < 1e-9 {
                    format!("{}", v.round() as i64)
                } else {
                    String::new()
                }
            })
            .y_label_formatter(&|v| format!("{v:.dec$}"))
            .axis_desc_style((FONT, 17))
            .label_style((FONT, 15))
            .light_line_style(WHITE.mix(0.0))
            .bold_line_style(BLACK.mix(0.12))
            .draw()
            .map_err(e)?;
        // With many points, a marker on each would bury the lines: markers then go on every
        // k-th point (staggered between series) and on isolated points, and lines thin.
        let k = xs.len().div_ceil(20).max(1);
        let width = if xs.len() > 30 { 2 } else { 3 };
        for (i, s) in series.iter().enumerate() {
            let style = colour(i).stroke_width(width);
            let offset = i * k / series.len().max(1);
            for run in &runs(xs, &s.values) {
                if i % 2 == 0 || run.len() < 2 {
                    chart
                        .draw_series(LineSeries::new(run.clone(), style))
                        .map_err(e)?;
                } else {
                    chart
                        .draw_series(DashedLineSeries::new(run.clone(), 9, 6, style))
                        .map_err(e)?;
                }
                let marked: Vec<(f64, f64)> = run
                    .iter()
                    .copied()
                    .filter(|(x, _)| run.len() == 1 || (*x as usize + offset).is_multiple_of(k))
                    .collect();
                markers(&mut chart, &marked, i)?;
            }
        }
        draw_legend(&legend, series, true)?;
        root.present().map_err(e)?;
    }
    Ok(finish(svg, title))
}

/// Consecutive points with a value (a gap splits the line).
fn runs(xs: &[u64], values: &[Option<f64>]) -> Vec<Vec<(f64, f64)>> {
    let mut out: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
    for (x, v) in xs.iter().zip(values) {
        match v {
            Some(v) if v.is_finite() => out.last_mut().unwrap().push((*x as f64, *v)),
            _ if out.last().is_some_and(|r| !r.is_empty()) => out.push(Vec::new()),
            _ => {}
        }
    }
    out.retain(|r| !r.is_empty());
    out
}

/// Series `i`'s marker shape (4 shapes, shifted every palette cycle so no two series of
/// one chart share both colour and shape).
fn shape(i: usize) -> usize {
    (i / PALETTE.len() + i) % 4
}

/// Draw series `i`'s marker at each point of `run`.
fn markers<DB: DrawingBackend>(
    chart: &mut ChartContext<
        DB,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
    run: &[(f64, f64)],
    i: usize,
) -> Result<(), Err> {
    let c = colour(i);
    let pts = run.iter().map(|p| EmptyElement::at(*p));
    match shape(i) {
        0 => chart.draw_series(pts.map(|m| m + Circle::new((0, 0), 5, c.filled()))),
        1 => chart.draw_series(pts.map(|m| m + TriangleMarker::new((0, 0), 7, c.filled()))),
        2 => chart.draw_series(pts.map(|m| m + Rectangle::new([(-5, -5), (5, 5)], c.filled()))),
        _ => chart.draw_series(pts.map(|m| m + Cross::new((0, 0), 5, c.stroke_width(3)))),
    }
    .map(|_| ())
    .map_err(e)
}

/// The legend panel: a swatch (a line with its marker, or a filled box) and the name.
fn draw_legend(
    area: &DrawingArea<SVGBackend, Shift>,
    series: &[Series],
    as_lines: bool,
) -> Result<(), Err> {
    let font = (FONT, 15).into_font();
    let row = 26;
    let top = 60;
    area.draw(&Text::new(
        "Legend",
        (16, top - 30),
        (FONT, 15).into_font().style(FontStyle::Bold),
    ))
    .map_err(e)?;
    for (i, s) in series.iter().enumerate() {
        let y = top + row * i as i32;
        let c = colour(i);
        if as_lines {
            let style = c.stroke_width(3);
            if i % 2 == 0 {
                area.draw(&PathElement::new(vec![(12, y), (52, y)], style))
                    .map_err(e)?;
            } else {
                for x in [12, 27, 42] {
                    area.draw(&PathElement::new(vec![(x, y), (x + 9, y)], style))
                        .map_err(e)?;
                }
            }
            let m = EmptyElement::at((32, y));
            match shape(i) {
                0 => area.draw(&(m + Circle::new((0, 0), 5, c.filled()))),
                1 => area.draw(&(m + TriangleMarker::new((0, 0), 7, c.filled()))),
                2 => area.draw(&(m + Rectangle::new([(-5, -5), (5, 5)], c.filled()))),
                _ => area.draw(&(m + Cross::new((0, 0), 5, c.stroke_width(3)))),
            }
            .map_err(e)?;
        } else {
            area.draw(&Rectangle::new([(16, y - 8), (48, y + 8)], c.filled()))
                .map_err(e)?;
        }
        area.draw(&Text::new(shorten(&s.name, 30), (62, y - 9), font.clone()))
            .map_err(e)?;
    }
    Ok(())
}

/// Grouped bars, vertical: one group per category, one bar per series in each group.
pub fn grouped_bars(
    title: &str,
    category_label: &str,
    categories: &[String],
    y: &Axis,
    series: &[Series],
) -> Result<String, Err> {
    let height = fit_legend(460, series.len());
    let n_cat = categories.len().max(1);
    let n_ser = series.len().max(1);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        let (plot, legend) = root.split_horizontally(WIDTH - LEGEND_W);
        let mut chart = ChartBuilder::on(&plot)
            .caption(title, (FONT, 22).into_font())
            .margin(12)
            .x_label_area_size(52)
            .y_label_area_size(70)
            .build_cartesian_2d(-0.5f64..n_cat as f64 - 0.5, 0f64..y.max * 1.08)
            .map_err(e)?;
        let (dec, tick) = (y.decimals, y.tick_decimals());
        chart
            .configure_mesh()
            .x_desc(category_label)
            .y_desc(y.label.as_str())
            .x_labels(n_cat)
            .x_label_formatter(&|v| category_at(categories, *v))
            .y_label_formatter(&|v| format!("{v:.tick$}"))
            .disable_x_mesh()
            .axis_desc_style((FONT, 17))
            .label_style((FONT, 15))
            .light_line_style(WHITE.mix(0.0))
            .bold_line_style(BLACK.mix(0.12))
            .draw()
            .map_err(e)?;
        let group = 0.8;
        let w = group / n_ser as f64;
        let show_values = n_ser * n_cat <= 24;
        for (i, s) in series.iter().enumerate() {
            let bars = s.values.iter().enumerate().filter_map(|(c, v)| {
                let v = v.filter(|v| v.is_finite())?;
                let x0 = c as f64 - group / 2.0 + w * i as f64;
                Some(Rectangle::new(
                    [(x0 + w * 0.06, 0.0), (x0 + w * 0.94, v)],
                    colour(i).filled(),
                ))
            });
            chart.draw_series(bars).map_err(e)?;
            if show_values {
                let labels = s.values.iter().enumerate().filter_map(|(c, v)| {
                    let v = v.filter(|v| v.is_finite())?;
                    let x = c as f64 - group / 2.0 + w * (i as f64 + 0.5);
                    Some(value_label(
                        format!("{v:.dec$}"),
                        (x, v),
                        Pos::new(HPos::Center, VPos::Bottom),
                    ))
                });
                chart.draw_series(labels).map_err(e)?;
            }
        }
        draw_legend(&legend, series, false)?;
        root.present().map_err(e)?;
    }
    Ok(finish(svg, title))
}

/// Grouped bars, horizontal: for many or long category names (object kinds, configurations).
pub fn grouped_bars_h(
    title: &str,
    categories: &[String],
    x: &Axis,
    series: &[Series],
) -> Result<String, Err> {
    let n_cat = categories.len().max(1);
    let n_ser = series.len().max(1);
    let per_cat = (n_ser as u32 * 14).clamp(30, 120);
    let height = fit_legend((130 + per_cat * n_cat as u32).max(260), series.len());
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        let (plot, legend) = root.split_horizontally(WIDTH - LEGEND_W);
        let mut chart = ChartBuilder::on(&plot)
            .caption(title, (FONT, 22).into_font())
            .margin(12)
            .margin_right(40)
            .x_label_area_size(52)
            .y_label_area_size(190)
            .build_cartesian_2d(0f64..x.max * 1.04, -0.5f64..n_cat as f64 - 0.5)
            .map_err(e)?;
        let (dec, tick) = (x.decimals, x.tick_decimals());
        // Category 0 at the top, as a table reads.
        let top_down = |v: f64| n_cat as f64 - 1.0 - v;
        chart
            .configure_mesh()
            .x_desc(x.label.as_str())
            .y_labels(n_cat)
            .y_label_formatter(&|v| category_at(categories, top_down(*v)))
            .x_label_formatter(&|v| format!("{v:.tick$}"))
            .disable_y_mesh()
            .axis_desc_style((FONT, 17))
            .label_style((FONT, 15))
            .light_line_style(WHITE.mix(0.0))
            .bold_line_style(BLACK.mix(0.12))
            .draw()
            .map_err(e)?;
        let group = 0.8;
        let h = group / n_ser as f64;
        let show_values = n_ser <= 4;
        for (i, s) in series.iter().enumerate() {
            let y0 = |c: usize| top_down(c as f64) + group / 2.0 - h * (i as f64 + 1.0);
            let bars = s.values.iter().enumerate().filter_map(|(c, v)| {
                let v = v.filter(|v| v.is_finite())?;
                Some(Rectangle::new(
                    [(0.0, y0(c) + h * 0.08), (v, y0(c) + h * 0.92)],
                    colour(i).filled(),
                ))
            });
            chart.draw_series(bars).map_err(e)?;
            if show_values {
                let labels = s.values.iter().enumerate().filter_map(|(c, v)| {
                    let v = v.filter(|v| v.is_finite())?;
                    Some(value_label(
                        format!(" {v:.dec$}"),
                        (v, y0(c) + h / 2.0),
                        Pos::new(HPos::Left, VPos::Center),
                    ))
                });
                chart.draw_series(labels).map_err(e)?;
            }
        }
        draw_legend(&legend, series, false)?;
        root.present().map_err(e)?;
    }
    Ok(finish(svg, title))
}

/// A bar's value printed beside it (13 px, black), anchored at `at` by `anchor`.
fn value_label<C>(text: String, at: C, anchor: Pos) -> Text<'static, C, String> {
    Text::new(text, at, (FONT, 13).into_font().color(&BLACK).pos(anchor))
}

/// The category whose centre is at `v` (an integer), or nothing between categories.
fn category_at(categories: &[String], v: f64) -> String {
    let r = v.round();
    if (v - r).abs() > 1e-6 || r < 0.0 {
        return String::new();
    }
    categories
        .get(r as usize)
        .map(|c| shorten(c, 26))
        .unwrap_or_default()
}

/// Long names are cut with an ellipsis (the table under the chart has them whole).
fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(max - 1).collect();
        out.push('…');
        out
    }
}

/// Inline-ready SVG: the namespace attribute dropped (inline SVG in HTML needs none, and
/// the page then holds no URL at all), scalable to its container, and titled.
fn finish(svg: String, title: &str) -> String {
    let svg = svg.replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1);
    let Some(end) = svg.find('>') else {
        return svg;
    };
    let (open, rest) = svg.split_at(end);
    format!(
        "{open} role=\"img\" preserveAspectRatio=\"xMidYMid meet\"><title>{}</title>{}",
        escape(title),
        &rest[1..]
    )
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis() -> Axis {
        Axis {
            label: "score (0-1)".into(),
            max: 1.0,
            decimals: 2,
        }
    }

    #[test]
    fn every_chart_has_its_title_first() {
        let s = vec![Series {
            name: "a <b>".into(),
            values: vec![Some(0.5), None, Some(1.0)],
        }];
        let cats: Vec<String> = ["x", "y", "z"].iter().map(|s| s.to_string()).collect();
        for svg in [
            lines("T & 1", "turn", &[0, 1, 2], &axis(), &s).unwrap(),
            grouped_bars("T & 1", "metric", &cats, &axis(), &s).unwrap(),
            grouped_bars_h("T & 1", &cats, &axis(), &s).unwrap(),
        ] {
            assert!(svg.starts_with("<svg "), "{}", &svg[..80]);
            let title = svg.find("<title>T &amp; 1</title>").unwrap();
            assert!(title < svg.find("<rect").unwrap());
            assert!(!svg.contains("http"));
            assert!(svg.contains("a &lt;b&gt;"), "legend names escaped");
        }
    }

    #[test]
    fn gaps_split_lines() {
        let r = runs(&[0, 1, 2, 3], &[Some(1.0), None, Some(2.0), Some(3.0)]);
        assert_eq!(r, vec![vec![(0.0, 1.0)], vec![(2.0, 2.0), (3.0, 3.0)]]);
    }
}
