//! Sums and means as numpy computes them, to the last bit: MemoryCode's evaluator and
//! ConvCodeWorld's tables both depend on numpy's summation order.
//!
//! Floating-point addition is not associative, so the order of a sum changes the last
//! digit. numpy's `add.reduce` over a contiguous 1-D float64 array sums pairwise
//! (`pairwise_sum` in numpy/_core/src/umath/loops_utils.h.src); over axis 0 of a 2-D
//! array it adds the rows one after the other, element by element. `nanmean` is that sum
//! with NaN replaced by 0, divided by the count of non-NaN values
//! (numpy/lib/_nanfunctions_impl.py).

/// numpy's unrolled block: below this many elements a sum is one 8-way unrolled pass.
const BLOCK: usize = 128;

/// `np.add.reduce` of a contiguous 1-D float64 array.
pub fn pairwise_sum(a: &[f64]) -> f64 {
    let n = a.len();
    if n < 8 {
        // Starting from 0.0: numpy's sum of negative zeros is 0.0 (`np.sum([-0.0] * 3)`).
        a.iter().fold(0.0, |res, &x| res + x)
    } else if n <= BLOCK {
        let mut r = [0.0f64; 8];
        r.copy_from_slice(&a[..8]);
        let whole = n - n % 8;
        for chunk in a[8..whole].chunks_exact(8) {
            for (acc, &x) in r.iter_mut().zip(chunk) {
                *acc += x;
            }
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for &x in &a[whole..] {
            res += x;
        }
        res
    } else {
        // Halve, keeping the first half a multiple of the unroll factor.
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        pairwise_sum(&a[..n2]) + pairwise_sum(&a[n2..])
    }
}

/// `np.nanmean` of a 1-D array: NaN (numpy warns) when every value is NaN or there are none.
pub fn nanmean(a: &[f64]) -> f64 {
    let zeroed: Vec<f64> = a
        .iter()
        .map(|&x| if x.is_nan() { 0.0 } else { x })
        .collect();
    let count = a.iter().filter(|x| !x.is_nan()).count();
    divide(pairwise_sum(&zeroed), count)
}

/// `np.nanmean(rows, axis=0)` of equally long rows, in the rows' order: each column is
/// summed row after row (NaN as 0) and divided by its count of non-NaN values.
pub fn nanmean_axis0(rows: &[&[f64]], len: usize) -> Vec<f64> {
    let mut sums = vec![0.0f64; len];
    let mut counts = vec![0usize; len];
    for row in rows {
        for (i, &x) in row.iter().take(len).enumerate() {
            if !x.is_nan() {
                sums[i] += x;
                counts[i] += 1;
            }
        }
    }
    sums.into_iter()
        .zip(counts)
        .map(|(s, c)| divide(s, c))
        .collect()
}

/// numpy's `_divide_by_count`: a float64 divided by an integer count, NaN for 0 / 0.
fn divide(sum: f64, count: usize) -> f64 {
    if count == 0 {
        f64::NAN
    } else {
        sum / count as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_matters_and_is_numpy_s() {
        // Left to right, 1e16 + 1 + 1 ... loses every 1; the unrolled lanes keep them.
        let mut a = vec![1e16];
        a.extend(std::iter::repeat_n(1.0, 15));
        let left_to_right = a.iter().fold(0.0, |s, &x| s + x);
        assert_eq!(left_to_right, 1e16);
        // Lane 0 holds 1e16 + 1 (rounds to 1e16); lanes 1..7 hold 2 each: + 14 is exact.
        assert_eq!(pairwise_sum(&a), 1e16 + 14.0);
    }

    #[test]
    fn nanmean_skips_nan_and_is_nan_when_empty() {
        assert_eq!(nanmean(&[1.0, f64::NAN, 0.0]), 0.5);
        assert!(nanmean(&[]).is_nan());
        assert!(nanmean(&[f64::NAN]).is_nan());
        let rows: [&[f64]; 2] = [&[1.0, f64::NAN], &[0.0, f64::NAN]];
        let m = nanmean_axis0(&rows, 2);
        assert_eq!(m[0], 0.5);
        assert!(m[1].is_nan());
    }
}
