//! The uncertainty the report draws: a percentile bootstrap of a mean over dialogues.
//! Seeded and drawn with CPython's generator (`pyrandom`), so a reader can redo any band in
//! Python: `random.Random(SEED).choices(scores, k=len(scores))`, `RESAMPLES` times.

use pivot_bench::pyrandom::PyRandom;

/// Resamples per band.
pub const RESAMPLES: usize = 2000;
/// The seed of every band (each point starts its own generator from it).
pub const SEED: i128 = 2025;
/// The band's coverage.
pub const LEVEL: f64 = 0.95;

/// A mean with its bootstrap interval and the number of values it averages.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub mean: f64,
    pub low: f64,
    pub high: f64,
    pub n: usize,
}

/// The plain mean of `values` (left to right) and its 95% percentile bootstrap interval;
/// `None` when there is nothing to average. One value gives a band of zero width.
pub fn bootstrap_mean(values: &[f64]) -> Option<Estimate> {
    if values.is_empty() {
        return None;
    }
    let mean = |xs: &mut dyn Iterator<Item = f64>| {
        let (s, n) = xs.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
        s / n as f64
    };
    let mut rng = PyRandom::new(SEED);
    let mut means: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            let pick = rng
                .choices(values, values.len())
                .expect("a non-empty population");
            mean(&mut pick.into_iter().copied())
        })
        .collect();
    means.sort_by(f64::total_cmp);
    let tail = (1.0 - LEVEL) / 2.0;
    Some(Estimate {
        mean: mean(&mut values.iter().copied()),
        low: quantile(&means, tail),
        high: quantile(&means, 1.0 - tail),
        n: values.len(),
    })
}

/// numpy's default (`linear`) quantile of sorted values.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let (i, frac) = (pos.floor() as usize, pos - pos.floor());
    match sorted.get(i + 1) {
        Some(next) if frac > 0.0 => sorted[i] + (next - sorted[i]) * frac,
        _ => sorted[i],
    }
}

/// What the caption under a banded chart says about the band.
pub fn method() -> String {
    format!(
        "Band: {:.0}% percentile bootstrap interval of the mean over dialogues ({RESAMPLES} resamples with replacement of the point's dialogues; for every point CPython's random.Random({SEED}).choices(scores, k=n) on its dialogues' scores in id order, numpy's linear quantiles of the resampled means).",
        LEVEL * 100.0
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_band_holds_the_mean_and_narrows_with_more_dialogues() {
        let few: Vec<f64> = (0..10).map(|i| (i % 2) as f64).collect();
        let many: Vec<f64> = (0..400).map(|i| (i % 2) as f64).collect();
        let a = bootstrap_mean(&few).unwrap();
        let b = bootstrap_mean(&many).unwrap();
        assert_eq!((a.mean, a.n), (0.5, 10));
        assert!(a.low < 0.5 && 0.5 < a.high, "{a:?}");
        assert!(b.high - b.low < (a.high - a.low) / 3.0, "{a:?} {b:?}");
        // Seeded: the same values give the same band.
        assert_eq!(bootstrap_mean(&few), Some(a));
        let one = bootstrap_mean(&[0.25]).unwrap();
        assert_eq!((one.low, one.high), (0.25, 0.25));
        assert_eq!(bootstrap_mean(&[]), None);
    }

    #[test]
    fn quantiles_interpolate_as_numpy() {
        let xs = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&xs, 0.5), 2.5);
        assert_eq!(quantile(&xs, 0.0), 1.0);
        assert_eq!(quantile(&xs, 1.0), 4.0);
        assert!((quantile(&xs, 0.025) - 1.075).abs() < 1e-12);
    }
}
