//! The report's charts: `plotters` drawing into SVG strings, each then given an SVG
//! `<title>` (plotters writes none) so screen readers and tooltips name it.
//!
//! Every chart has its legend in a panel to the right of the plot, drawn by us with
//! plotters elements, so that a legend never covers data however many series there are.

use plotters::chart::MeshStyle;
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

/// Characters per legend line: longer names wrap onto further lines, never cut.
const LEGEND_CHARS: usize = 30;
const LEGEND_LINE: i32 = 18;

/// Tall enough for the legend's rows.
fn fit_legend(height: u32, rows: &[LegendRow]) -> u32 {
    let h: i32 = rows.iter().map(LegendRow::height).sum();
    height.max(70 + h as u32)
}

/// One legend entry: the name in lines, and what it coincides with.
struct LegendRow {
    name: Vec<String>,
    note: Vec<String>,
}

impl LegendRow {
    fn height(&self) -> i32 {
        8 + LEGEND_LINE * (self.name.len() + self.note.len()).max(1) as i32
    }
}

fn legend_rows(series: &[Series], same_as: &[Option<usize>]) -> Vec<LegendRow> {
    series
        .iter()
        .enumerate()
        .map(|(i, s)| LegendRow {
            name: wrap(&s.name, LEGEND_CHARS),
            note: match same_as.get(i).copied().flatten() {
                Some(j) => wrap(&format!("= {} (same values)", series[j].name), LEGEND_CHARS),
                None => Vec::new(),
            },
        })
        .collect()
}

/// Lines of at most `width` characters, broken after a space, `-`, `/` or `_` where one is
/// near the end, else inside a word; nothing is dropped.
fn wrap(s: &str, width: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut start = 0;
    while chars.len() - start > width {
        let window = &chars[start..start + width];
        let cut = window
            .iter()
            .rposition(|c| matches!(c, ' ' | '-' | '/' | '_'))
            .filter(|&p| p >= width / 2)
            .map_or(width, |p| p + 1);
        out.push(
            chars[start..start + cut]
                .iter()
                .collect::<String>()
                .trim_end()
                .to_string(),
        );
        start += cut;
        while chars.get(start) == Some(&' ') {
            start += 1;
        }
    }
    out.push(chars[start..].iter().collect());
    out
}

/// Groups (two or more, indices in order) of series with the same value at every position:
/// drawn as they are, the later ones would hide the earlier ones entirely. Series without
/// any value are in no group (nothing of them is drawn).
pub fn coincident(series: &[Series]) -> Vec<Vec<usize>> {
    let same = |a: &Series, b: &Series| {
        a.values.len() == b.values.len()
            && a.values.iter().zip(&b.values).all(|(x, y)| match (x, y) {
                (Some(x), Some(y)) => x == y || (!x.is_finite() && !y.is_finite()),
                (None, None) => true,
                _ => false,
            })
    };
    let drawn = |s: &Series| s.values.iter().flatten().any(|v| v.is_finite());
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, s) in series.iter().enumerate() {
        if !drawn(s) {
            continue;
        }
        match groups.iter_mut().find(|g| same(&series[g[0]], s)) {
            Some(g) => g.push(i),
            None => groups.push(vec![i]),
        }
    }
    groups.retain(|g| g.len() > 1);
    groups
}

type Err = String;

fn e<E: std::fmt::Debug>(err: E) -> Err {
    format!("drawing a chart failed: {err:?}")
}

/// Every chart's coordinates: real numbers on both axes.
type Coord = plotters::coord::types::RangedCoordf64;
type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<Coord, Coord>>;
type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// A chart's SVG, `height` pixels tall: `plot` draws into the area left of the legend panel,
/// then the legend (lines with markers, or boxes) is drawn and the whole titled.
fn chart_svg(
    title: &str,
    height: u32,
    series: &[Series],
    rows: &[LegendRow],
    as_lines: bool,
    plot: impl FnOnce(&Area) -> Result<(), Err>,
) -> Result<String, Err> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        let (plot_area, legend) = root.split_horizontally(WIDTH - LEGEND_W);
        plot(&plot_area)?;
        draw_legend(&legend, series, rows, as_lines)?;
        root.present().map_err(e)?;
    }
    Ok(finish(svg, title))
}

/// The builder every chart starts from: its title as caption, the margins, room for the
/// x axis's labels.
fn builder<'a, 'b>(area: &'a Area<'b>, title: &str) -> ChartBuilder<'a, 'b, SVGBackend<'b>> {
    let mut b = ChartBuilder::on(area);
    b.caption(title, (FONT, 22).into_font())
        .margin(12)
        .x_label_area_size(52);
    b
}

/// Draw the axes and grid in every chart's style (fonts, faint lines at labelled ticks only)
/// once `mesh` has the chart's own labels.
fn draw_mesh<DB: DrawingBackend>(
    mesh: &mut MeshStyle<'_, '_, Coord, Coord, DB>,
) -> Result<(), Err> {
    mesh.axis_desc_style((FONT, 17))
        .label_style((FONT, 15))
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(BLACK.mix(0.12))
        .draw()
        .map_err(e)
}

/// A line chart: x is an integer position (turn, session), one line per series. Lines differ
/// by colour, marker shape and (every other series) dashes, so they stay apart in grey print.
/// Series with the same values everywhere ([`coincident`]) are drawn one inside the other
/// (the first widest), their markers side by side, and the legend says which they equal;
/// markers are drawn after every line, so a series of one point is never under a line.
pub fn lines(
    title: &str,
    x_label: &str,
    xs: &[u64],
    y: &Axis,
    series: &[Series],
) -> Result<String, Err> {
    lines_with(title, x_label, xs, None, y, series, &Extras::default())
}

/// What a line chart may draw besides its lines.
#[derive(Default)]
pub struct Extras<'a> {
    /// Per series, per x position: the band's (low, high), drawn translucent under the lines.
    pub bands: &'a [Vec<Option<(f64, f64)>>],
    /// Per x position, a short text written just above the x axis (e.g. `n=30`).
    pub counts: &'a [String],
    /// A dotted vertical rule between two x positions (at this x), with its label.
    pub divider: Option<(f64, &'a str)>,
}

/// A line chart over categories (`labels[i]` at x = i, evenly spaced) with bands under the
/// lines and counts above the axis: for x values that are few and far apart (dialogue
/// lengths 1, 2, ..., 15, 20, ..., 100).
pub fn band_lines(
    title: &str,
    x_label: &str,
    labels: &[String],
    y: &Axis,
    series: &[Series],
    extras: &Extras,
) -> Result<String, Err> {
    let xs: Vec<u64> = (0..labels.len() as u64).collect();
    lines_with(title, x_label, &xs, Some(labels), y, series, extras)
}

fn lines_with(
    title: &str,
    x_label: &str,
    xs: &[u64],
    labels: Option<&[String]>,
    y: &Axis,
    series: &[Series],
    extras: &Extras,
) -> Result<String, Err> {
    // (rank in its group, group size) and the group's first series, per series.
    let mut place = vec![(0usize, 1usize); series.len()];
    let mut same_as = vec![None; series.len()];
    for g in coincident(series) {
        for (r, &i) in g.iter().enumerate() {
            place[i] = (r, g.len());
            if r > 0 {
                same_as[i] = Some(g[0]);
            }
        }
    }
    let rows = legend_rows(series, &same_as);
    let height = fit_legend(460, &rows);
    chart_svg(title, height, series, &rows, true, |plot| {
        let x_max = xs.iter().copied().max().unwrap_or(0).max(1) as f64;
        let x_min = xs.iter().copied().min().unwrap_or(0) as f64;
        // Counts get a strip of their own under the value 0, clear of every line.
        let y_min = if extras.counts.is_empty() {
            0.0
        } else {
            -y.max * 0.07
        };
        let mut chart = builder(plot, title)
            .y_label_area_size(70)
            .build_cartesian_2d(x_min - 0.3..x_max + 0.3, y_min..y.max * 1.04)
            .map_err(e)?;
        let n_x = xs.len().clamp(2, 21);
        let dec = y.tick_decimals();
        let x_label_of = |v: &f64| {
            if (v - v.round()).abs() < 1e-9 {
                match labels {
                    Some(l) => (v.round() >= 0.0)
                        .then(|| l.get(v.round() as usize).cloned())
                        .flatten()
                        .unwrap_or_default(),
                    None => format!("{}", v.round() as i64),
                }
            } else {
                String::new()
            }
        };
        let y_label_of = |v: &f64| {
            if *v < -1e-9 {
                String::new()
            } else {
                format!("{:.dec$}", v.abs())
            }
        };
        draw_mesh(
            chart
                .configure_mesh()
                .x_desc(x_label)
                .y_desc(y.label.as_str())
                .x_labels(n_x)
                .x_label_formatter(&x_label_of)
                .y_label_formatter(&y_label_of),
        )?;
        // Bands first, under every line: one translucent polygon per run of the series.
        for (i, band) in extras.bands.iter().enumerate() {
            for run in band_runs(xs, band) {
                let mut pts: Vec<(f64, f64)> = run.iter().map(|(x, lo, _)| (*x, *lo)).collect();
                pts.extend(run.iter().rev().map(|(x, _, hi)| (*x, *hi)));
                chart
                    .draw_series(std::iter::once(Polygon::new(
                        pts,
                        PALETTE[i % PALETTE.len()].mix(0.16).filled(),
                    )))
                    .map_err(e)?;
            }
        }
        if let Some((at, label)) = extras.divider {
            let dotted = BLACK.mix(0.45).stroke_width(1);
            chart
                .draw_series(DashedLineSeries::new(
                    [(at, 0.0), (at, y.max * 1.04)],
                    3,
                    4,
                    dotted,
                ))
                .map_err(e)?;
            chart
                .draw_series(std::iter::once(Text::new(
                    label.to_string(),
                    (at, y.max * 1.03),
                    (FONT, 13)
                        .into_font()
                        .color(&BLACK.mix(0.7))
                        .pos(Pos::new(HPos::Center, VPos::Top)),
                )))
                .map_err(e)?;
        }
        let counts = xs.iter().zip(extras.counts).map(|(x, c)| {
            Text::new(
                c.clone(),
                (*x as f64, y_min / 2.0),
                (FONT, 12)
                    .into_font()
                    .color(&BLACK.mix(0.65))
                    .pos(Pos::new(HPos::Center, VPos::Center)),
            )
        });
        chart.draw_series(counts).map_err(e)?;
        // With many points, a marker on each would bury the lines: markers then go on every
        // k-th point (staggered between series) and on isolated points, and lines thin.
        let k = xs.len().div_ceil(20).max(1);
        let width = if xs.len() > 30 { 2 } else { 3 };
        // Markers of coincident series step apart by this much of one x unit.
        let dodge = 0.12f64.min(0.6 / series.len().max(1) as f64);
        // (series, marked points, whether the run is a lone point).
        type Marks = (usize, Vec<(f64, f64)>, bool);
        let mut marks: Vec<Marks> = Vec::new();
        for (i, s) in series.iter().enumerate() {
            let (rank, size) = place[i];
            let style = colour(i).stroke_width(width + 4 * (size - 1 - rank) as u32);
            let offset = i * k / series.len().max(1);
            let shift = (rank as f64 - (size - 1) as f64 / 2.0) * dodge;
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
                    .map(|(x, v)| (x + shift, v))
                    .collect();
                marks.push((i, marked, run.len() == 1));
            }
        }
        // Isolated points last, larger and ringed in white: on top of every line.
        marks.sort_by_key(|(_, _, alone)| *alone);
        for (i, pts, alone) in &marks {
            if *alone {
                halo(&mut chart, pts)?;
            }
            let r = if *alone { 7 } else { 5 };
            for p in pts {
                draw_marker(chart.plotting_area(), *p, *i, r)?;
            }
        }
        Ok(())
    })
}

/// Consecutive x positions with a band (a gap splits it).
fn band_runs(xs: &[u64], band: &[Option<(f64, f64)>]) -> Vec<Vec<(f64, f64, f64)>> {
    let mut out: Vec<Vec<(f64, f64, f64)>> = vec![Vec::new()];
    for (x, b) in xs.iter().zip(band) {
        match b {
            Some((lo, hi)) if lo.is_finite() && hi.is_finite() => {
                out.last_mut().unwrap().push((*x as f64, *lo, *hi))
            }
            _ if out.last().is_some_and(|r| !r.is_empty()) => out.push(Vec::new()),
            _ => {}
        }
    }
    // A lone point's band is a vertical bar: a thin polygon around it.
    for r in out.iter_mut().filter(|r| r.len() == 1) {
        let (x, lo, hi) = r[0];
        *r = vec![(x - 0.08, lo, hi), (x + 0.08, lo, hi)];
    }
    out.retain(|r| !r.is_empty());
    out
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

/// Draw series `i`'s marker, `r` pixels in radius, at `at` on `area` (the plot, in its
/// values, or the legend panel, in pixels).
fn draw_marker<DB: DrawingBackend, CT: plotters::coord::CoordTranslate>(
    area: &DrawingArea<DB, CT>,
    at: CT::From,
    i: usize,
    r: i32,
) -> Result<(), Err> {
    let c = colour(i);
    let m = EmptyElement::at(at);
    match shape(i) {
        0 => area.draw(&(m + Circle::new((0, 0), r, c.filled()))),
        1 => area.draw(&(m + TriangleMarker::new((0, 0), r + 2, c.filled()))),
        2 => area.draw(&(m + Rectangle::new([(-r, -r), (r, r)], c.filled()))),
        _ => area.draw(&(m + Cross::new((0, 0), r, c.stroke_width(3)))),
    }
    .map_err(e)
}

/// A white disc under an isolated point's (larger) marker, so it stands out from the lines
/// it sits on.
fn halo<DB: DrawingBackend>(chart: &mut Chart<DB>, run: &[(f64, f64)]) -> Result<(), Err> {
    chart
        .draw_series(
            run.iter()
                .map(|p| EmptyElement::at(*p) + Circle::new((0, 0), 11, WHITE.filled())),
        )
        .map(|_| ())
        .map_err(e)
}

/// The legend panel: a swatch (a line with its marker, or a filled box) and the name,
/// wrapped onto as many lines as it needs; under it, in grey, the series it coincides with.
fn draw_legend(
    area: &Area,
    series: &[Series],
    rows: &[LegendRow],
    as_lines: bool,
) -> Result<(), Err> {
    let font = (FONT, 15).into_font();
    let grey = (FONT, 13).into_font().color(&RGBColor(0x55, 0x55, 0x55));
    let top = 60;
    area.draw(&Text::new(
        "Legend",
        (16, top - 30),
        (FONT, 15).into_font().style(FontStyle::Bold),
    ))
    .map_err(e)?;
    let mut y = top;
    for (i, (_, row)) in series.iter().zip(rows).enumerate() {
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
            draw_marker(area, (32, y), i, 5)?;
        } else {
            area.draw(&Rectangle::new([(16, y - 8), (48, y + 8)], c.filled()))
                .map_err(e)?;
        }
        let mut line_y = y - 9;
        for l in &row.name {
            area.draw(&Text::new(l.clone(), (62, line_y), font.clone()))
                .map_err(e)?;
            line_y += LEGEND_LINE;
        }
        for l in &row.note {
            area.draw(&Text::new(l.clone(), (62, line_y), grey.clone()))
                .map_err(e)?;
            line_y += LEGEND_LINE;
        }
        y += row.height();
    }
    Ok(())
}

/// Each series' bars, one per finite value, and, with `show_values`, the values beside them:
/// `bar(i, c, v)` is the rectangle of series `i` in category `c`, `label(i, c, v)` where its
/// value is written and how.
fn draw_bars<DB: DrawingBackend>(
    chart: &mut Chart<DB>,
    series: &[Series],
    show_values: bool,
    bar: impl Fn(usize, usize, f64) -> [(f64, f64); 2],
    label: impl Fn(usize, usize, f64) -> Text<'static, (f64, f64), String>,
) -> Result<(), Err> {
    for (i, s) in series.iter().enumerate() {
        let finite = || {
            (s.values.iter().enumerate())
                .filter_map(|(c, v)| Some((c, v.filter(|v| v.is_finite())?)))
        };
        let bars = finite().map(|(c, v)| Rectangle::new(bar(i, c, v), colour(i).filled()));
        chart.draw_series(bars).map_err(e)?;
        if show_values {
            chart
                .draw_series(finite().map(|(c, v)| label(i, c, v)))
                .map_err(e)?;
        }
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
    let rows = legend_rows(series, &[]);
    let height = fit_legend(460, &rows);
    let n_cat = categories.len().max(1);
    let n_ser = series.len().max(1);
    chart_svg(title, height, series, &rows, false, |plot| {
        let mut chart = builder(plot, title)
            .y_label_area_size(70)
            .build_cartesian_2d(-0.5f64..n_cat as f64 - 0.5, 0f64..y.max * 1.08)
            .map_err(e)?;
        let (dec, tick) = (y.decimals, y.tick_decimals());
        let category_of = |v: &f64| category_at(categories, *v);
        let tick_of = |v: &f64| format!("{v:.tick$}");
        draw_mesh(
            chart
                .configure_mesh()
                .x_desc(category_label)
                .y_desc(y.label.as_str())
                .x_labels(n_cat)
                .x_label_formatter(&category_of)
                .y_label_formatter(&tick_of)
                .disable_x_mesh(),
        )?;
        let group = 0.8;
        let w = group / n_ser as f64;
        let x0 = |i: usize, c: usize| c as f64 - group / 2.0 + w * i as f64;
        draw_bars(
            &mut chart,
            series,
            n_ser * n_cat <= 24,
            |i, c, v| [(x0(i, c) + w * 0.06, 0.0), (x0(i, c) + w * 0.94, v)],
            |i, c, v| {
                value_label(
                    format!("{v:.dec$}"),
                    (c as f64 - group / 2.0 + w * (i as f64 + 0.5), v),
                    Pos::new(HPos::Center, VPos::Bottom),
                )
            },
        )
    })
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
    let rows = legend_rows(series, &[]);
    let height = fit_legend((130 + per_cat * n_cat as u32).max(260), &rows);
    chart_svg(title, height, series, &rows, false, |plot| {
        let mut chart = builder(plot, title)
            .margin_right(40)
            .y_label_area_size(190)
            .build_cartesian_2d(0f64..x.max * 1.04, -0.5f64..n_cat as f64 - 0.5)
            .map_err(e)?;
        let (dec, tick) = (x.decimals, x.tick_decimals());
        // Category 0 at the top, as a table reads.
        let top_down = |v: f64| n_cat as f64 - 1.0 - v;
        let category_of = |v: &f64| category_at(categories, top_down(*v));
        let tick_of = |v: &f64| format!("{v:.tick$}");
        draw_mesh(
            chart
                .configure_mesh()
                .x_desc(x.label.as_str())
                .y_labels(n_cat)
                .y_label_formatter(&category_of)
                .x_label_formatter(&tick_of)
                .disable_y_mesh(),
        )?;
        let group = 0.8;
        let h = group / n_ser as f64;
        let y0 = |i: usize, c: usize| top_down(c as f64) + group / 2.0 - h * (i as f64 + 1.0);
        draw_bars(
            &mut chart,
            series,
            n_ser <= 4,
            |i, c, v| [(0.0, y0(i, c) + h * 0.08), (v, y0(i, c) + h * 0.92)],
            |i, c, v| {
                value_label(
                    format!(" {v:.dec$}"),
                    (v, y0(i, c) + h / 2.0),
                    Pos::new(HPos::Left, VPos::Center),
                )
            },
        )
    })
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
    fn long_names_wrap_whole() {
        let name = "meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo-128k";
        let lines = wrap(name, 30);
        assert!(lines.len() > 1 && lines.iter().all(|l| l.chars().count() <= 30));
        assert_eq!(lines.concat(), name);
        assert_eq!(wrap("short", 30), vec!["short"]);
        let words = wrap("a fairly long name with several words in it", 20);
        assert_eq!(
            words.join(" "),
            "a fairly long name with several words in it"
        );
    }

    #[test]
    fn coincident_series_are_grouped() {
        let s = |name: &str, v: &[Option<f64>]| Series {
            name: name.into(),
            values: v.to_vec(),
        };
        let series = [
            s("a", &[Some(1.0), Some(2.0)]),
            s("b", &[Some(1.0), None]),
            s("c", &[Some(1.0), Some(2.0)]),
            s("d", &[None, None]),
            s("e", &[None, None]),
            s("f", &[Some(1.0), None]),
        ];
        assert_eq!(coincident(&series), vec![vec![0, 2], vec![1, 5]]);
    }

    /// The SVG elements in document order: (tag, stroke or fill colour, stroke width).
    fn elements(svg: &str) -> Vec<(String, String, String)> {
        let attr = |el: &str, name: &str| {
            el.split(&format!(" {name}=\""))
                .nth(1)
                .and_then(|r| r.split('"').next())
                .unwrap_or("")
                .to_string()
        };
        svg.split('<')
            .skip(1)
            .map(|el| {
                let tag = el.split([' ', '>', '/']).next().unwrap_or("").to_string();
                let colour = match attr(el, "stroke") {
                    c if !c.is_empty() && c != "none" => c,
                    _ => attr(el, "fill"),
                };
                (tag, colour.to_uppercase(), attr(el, "stroke-width"))
            })
            .collect()
    }

    #[test]
    fn coincident_lines_nest_and_a_lone_point_is_drawn_last() {
        let flat = vec![Some(0.5); 5];
        let series = vec![
            Series {
                name: "first".into(),
                values: flat.clone(),
            },
            Series {
                name: "second".into(),
                values: flat,
            },
            Series {
                name: "lone".into(),
                values: vec![None, None, Some(0.5), None, None],
            },
        ];
        let svg = lines("T", "turn", &[0, 1, 2, 3, 4], &axis(), &series).unwrap();
        let els = elements(&svg);
        let hex = |c: RGBColor| format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2);
        let width_of = |c: RGBColor| {
            els.iter()
                .find(|(t, col, _)| t == "polyline" && *col == hex(c))
                .map(|(_, _, w)| w.parse::<u32>().unwrap())
                .unwrap()
        };
        // The first is drawn wider, under the second: both show.
        assert!(width_of(PALETTE[0]) > width_of(PALETTE[1]), "{svg}");
        // The lone point's marker comes after every line.
        let last_line = els.iter().rposition(|(t, _, _)| t == "polyline").unwrap();
        let lone = els
            .iter()
            .rposition(|(t, col, _)| t != "polyline" && t != "text" && *col == hex(PALETTE[2]))
            .unwrap();
        assert!(lone > last_line, "{svg}");
        // The legend says which series the second equals.
        assert!(svg.contains("= first (same values)"), "{svg}");
    }

    #[test]
    fn gaps_split_lines() {
        let r = runs(&[0, 1, 2, 3], &[Some(1.0), None, Some(2.0), Some(3.0)]);
        assert_eq!(r, vec![vec![(0.0, 1.0)], vec![(2.0, 2.0), (3.0, 3.0)]]);
    }
}
