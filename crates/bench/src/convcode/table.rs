//! Table 1 and Table 2 as the original prints them (PrettyTable, centered), plus JSON and Markdown.

use super::numeric::py_float;
use super::score_file::{Mode, Scores};

/// The legend the original prints under Table 1 (its trailing space included).
pub const LEGEND: &str = " - CF: Compilation Feedback\n - EF: Execution Feedback\n - partial|full TC: test cases with partial|full Test Coverage \n - SNF: Simulated Novice Feedback\n - SEF: Simulated Expert Feedback";

/// Center `text` in `width` the way PrettyTable does: odd leftovers go right for odd-length
/// text and left for even-length text.
fn center(text: &str, width: usize) -> String {
    let len = text.chars().count();
    let excess = width.saturating_sub(len);
    let (l, r) = if excess % 2 == 1 {
        if len % 2 == 1 {
            (excess / 2, excess / 2 + 1)
        } else {
            (excess / 2 + 1, excess / 2)
        }
    } else {
        (excess / 2, excess / 2)
    };
    format!("{}{}{}", " ".repeat(l), text, " ".repeat(r))
}

/// A PrettyTable with default style (frame, header rule, one space of padding), centered.
pub fn pretty_table(header: &[String], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            if i < widths.len() {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
    }
    let rule: String = {
        let mut s = String::from("+");
        for w in &widths {
            s.push_str(&"-".repeat(w + 2));
            s.push('+');
        }
        s
    };
    let line = |cells: &[String]| {
        let mut s = String::from("|");
        for (i, w) in widths.iter().enumerate() {
            let cell = cells.get(i).map(String::as_str).unwrap_or("");
            s.push(' ');
            s.push_str(&center(cell, *w));
            s.push_str(" |");
        }
        s
    };
    let mut out = vec![rule.clone(), line(header), rule.clone()];
    for row in rows {
        out.push(line(row));
    }
    out.push(rule);
    out.join("\n")
}

fn cell(v: Option<f64>) -> String {
    v.map(py_float).unwrap_or_default()
}

/// Header and rows of Table 1.
pub fn table1(s: &Scores) -> (Vec<String>, Vec<Vec<String>>) {
    let mut header = vec!["Turn".to_string()];
    header.extend(s.columns.iter().map(|c| c.label.clone()));
    let rows = s
        .turns
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut row = vec![t.to_string()];
            row.extend(
                s.columns
                    .iter()
                    .map(|c| cell(c.pass_at_1.get(i).copied().flatten())),
            );
            row
        })
        .collect();
    (header, rows)
}

/// Header and rows of Table 2 (only the configurations that were scored).
pub fn table2(s: &Scores) -> (Vec<String>, Vec<Vec<String>>) {
    let cols: Vec<_> = s.columns.iter().filter(|c| c.mrr.is_some()).collect();
    let mut header = vec!["Metrics".to_string()];
    header.extend(cols.iter().map(|c| c.label.clone()));
    let mut mrr = vec!["MRR".to_string()];
    mrr.extend(cols.iter().map(|c| cell(c.mrr)));
    let mut recall = vec!["Recall".to_string()];
    recall.extend(cols.iter().map(|c| cell(c.recall)));
    (header, vec![mrr, recall])
}

pub fn caption1(s: &Scores) -> String {
    match (&s.mode, &s.reference) {
        (Mode::Static, Some(r)) => format!(
            "Table 1. Pass@1 results of {} on ConvCodeBench for each turn (ref. model: {r}).",
            s.model
        ),
        _ => format!(
            "Table 1. Pass@1 results of {} on ConvCodeWorld for each turn.",
            s.model
        ),
    }
}

pub fn caption2(s: &Scores) -> String {
    match (&s.mode, &s.reference) {
        (Mode::Static, Some(r)) => format!(
            "Table 2. MRR and Recall results of {} on ConvCodeBench (ref. model: {r}).",
            s.model
        ),
        _ => format!(
            "Table 2. MRR and Recall results of {} on ConvCodeWorld.",
            s.model
        ),
    }
}

/// Both tables as the original prints them to stdout.
pub fn render_text(s: &Scores) -> String {
    let (h1, r1) = table1(s);
    let (h2, r2) = table2(s);
    format!(
        "{}\n{}\n{LEGEND}\n\n{}\n{}\n\n",
        pretty_table(&h1, &r1),
        caption1(s),
        pretty_table(&h2, &r2),
        caption2(s)
    )
}

fn markdown_table(header: &[String], rows: &[Vec<String>]) -> String {
    let esc = |c: &str| c.replace('|', "\\|");
    let mut out = format!(
        "| {} |\n",
        header
            .iter()
            .map(|h| esc(h))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    out.push_str(&format!("|{}\n", ":---:|".repeat(header.len())));
    for row in rows {
        out.push_str(&format!(
            "| {} |\n",
            row.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | ")
        ));
    }
    out
}

/// Both tables as GitHub Markdown, captions in italics under each.
pub fn render_markdown(s: &Scores) -> String {
    let (h1, r1) = table1(s);
    let (h2, r2) = table2(s);
    let legend = LEGEND
        .lines()
        .map(|l| l.trim_end())
        .collect::<Vec<_>>()
        .join("\n");
    format!(
        "{}\n{}\n{legend}\n\n{}\n{}\n",
        markdown_table(&h1, &r1),
        caption1(s),
        markdown_table(&h2, &r2),
        caption2(s)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn centering_matches_prettytable() {
        assert_eq!(center("0", 4), " 0  ");
        assert_eq!(center("10", 4), " 10 ");
        assert_eq!(center("35.2", 19), "        35.2       ");
        assert_eq!(center("", 3), "   ");
    }
}
