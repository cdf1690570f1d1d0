//! Python's `random.Random`, draw for draw: what CPython 3.11's generator returns for an
//! integer seed, for the originals that draw with it (ConvCodeWorld visits tasks in DSPy's
//! `random.Random(0).shuffle` order; MemoryCode's `generate_template.py` draws its dialogue
//! templates with `randint`, `choices`, `uniform`, `sample`, `choice` and `random`).
//!
//! CPython's generator is MT19937 (here `rand_mt`'s), seeded by `init_by_array` of the
//! 32-bit words of `abs(seed)`, least significant first (one word, 0, for the seed 0).
//! Every integer draw goes through `getrandbits(k)`: one 32-bit output per 32 bits, the
//! least significant word drawn first, and the surplus low bits of the last output dropped.
//! `_randbelow(n)` draws `getrandbits(n.bit_length())` until the value is below `n`, so
//! `randrange`, `randint`, `choice`, `shuffle` and `sample` follow from it; `random()`
//! takes 27 and 26 bits of two outputs, `uniform` and `choices` follow from `random()`.
//! The tests below run the real `python3` and compare every draw with it.

use rand_mt::Mt;

/// `random.Random(seed)` for an integer seed.
pub struct PyRandom(Mt);

impl PyRandom {
    /// `random.Random(seed)`: MT19937 seeded with `init_by_array` of `abs(seed)`'s 32-bit
    /// words (at most four, which `rand_mt` mixes as CPython does; CPython's longer keys, for
    /// seeds of 2^128 and above, have no `i128` to come from).
    pub fn new(seed: i128) -> PyRandom {
        let n = seed.unsigned_abs();
        let bits = 128 - n.leading_zeros();
        let words = bits.div_ceil(32).max(1) as usize;
        let key: Vec<u32> = (0..words).map(|i| (n >> (32 * i)) as u32).collect();
        PyRandom(Mt::new_with_key(key))
    }

    /// `random()`: 53 random bits in [0, 1), from the top 27 and 26 bits of two outputs.
    pub fn random(&mut self) -> f64 {
        let a = (self.0.next_u32() >> 5) as f64;
        let b = (self.0.next_u32() >> 6) as f64;
        (a * 67108864.0 + b) * (1.0 / 9007199254740992.0)
    }

    /// `getrandbits(k)` for `k <= 64` (0 gives 0 and draws nothing, as CPython 3.9 and later).
    /// A wider `k` is a caller's mistake: no draw here needs one.
    pub fn getrandbits(&mut self, k: u32) -> u64 {
        assert!(k <= 64, "getrandbits({k}): at most 64 bits here");
        if k == 0 {
            return 0;
        }
        if k <= 32 {
            return u64::from(self.0.next_u32() >> (32 - k));
        }
        // Two words, the low one first; the high one keeps its top `k - 32` bits.
        let low = u64::from(self.0.next_u32());
        let high = u64::from(self.0.next_u32() >> (64 - k));
        (high << 32) | low
    }

    /// `_randbelow(n)`: an integer in `0..n`, by rejection over `getrandbits(n.bit_length())`.
    /// `n = 0` gives 0 without a draw (CPython would loop forever; no public draw asks it).
    pub fn randbelow(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        let k = 64 - n.leading_zeros();
        loop {
            let r = self.getrandbits(k);
            if r < n {
                return r;
            }
        }
    }

    /// `randrange(start, stop, step)` (`randrange(n)` draws as `randrange(0, n, 1)`); `None`
    /// where Python raises `ValueError` (an empty range, a zero step).
    pub fn randrange(&mut self, start: i64, stop: i64, step: i64) -> Option<i64> {
        let (start, stop, step) = (i128::from(start), i128::from(stop), i128::from(step));
        let width = stop - start;
        let n = match step {
            0 => return None,
            1 => width,
            s if s > 0 => floor_div(width + s - 1, s),
            s => floor_div(width + s + 1, s),
        };
        if n <= 0 {
            return None;
        }
        // `n` is at most 2^64 - 1 (a width of two i64s), the result inside [start, stop).
        let r = i128::from(self.randbelow(n as u64));
        i64::try_from(start + step * r).ok()
    }

    /// `randint(a, b)`: `randrange(a, b + 1)`; `None` when `a > b` (and for `b = i64::MAX`,
    /// whose `b + 1` no `i64` holds).
    pub fn randint(&mut self, a: i64, b: i64) -> Option<i64> {
        let stop = b.checked_add(1)?;
        self.randrange(a, stop, 1)
    }

    /// `choice(seq)`; `None` for an empty sequence (Python raises `IndexError`).
    pub fn choice<'a, T>(&mut self, seq: &'a [T]) -> Option<&'a T> {
        if seq.is_empty() {
            return None;
        }
        Some(&seq[self.randbelow(seq.len() as u64) as usize])
    }

    /// `choices(population, k=k)` without weights: `floor(random() * n)` for each pick; `None`
    /// when picking from an empty population (Python raises `IndexError` after its first
    /// `random()`, which is drawn here too).
    pub fn choices<'a, T>(&mut self, population: &'a [T], k: usize) -> Option<Vec<&'a T>> {
        if population.is_empty() && k > 0 {
            self.random();
            return None;
        }
        let n = population.len() as f64;
        Some(
            (0..k)
                .map(|_| &population[(self.random() * n).floor() as usize])
                .collect(),
        )
    }

    /// `shuffle(x)`, in place: from the end, each item swapped with one at or before it.
    pub fn shuffle<T>(&mut self, x: &mut [T]) {
        for i in (1..x.len()).rev() {
            let j = self.randbelow(i as u64 + 1) as usize;
            x.swap(i, j);
        }
    }

    /// `sample(population, k)`, CPython 3.11's algorithm: for a population no larger than
    /// the set it would need, a partial shuffle of a copy; otherwise draws over the whole
    /// population, redrawn until unseen. `None` when `k` exceeds the population (Python
    /// raises `ValueError`).
    pub fn sample<T: Clone>(&mut self, population: &[T], k: usize) -> Option<Vec<T>> {
        let n = population.len();
        if k > n {
            return None;
        }
        // Python's `21 + 4 ** ceil(log(3k, 4))` for k > 5: the bytes of a set of k items.
        let mut setsize = 21usize;
        if k > 5 {
            let exp = ((k as f64 * 3.0).ln() / 4f64.ln()).ceil() as u32;
            setsize = setsize.saturating_add(4usize.checked_pow(exp).unwrap_or(usize::MAX));
        }
        let mut result = Vec::with_capacity(k);
        if n <= setsize {
            let mut pool = population.to_vec();
            for i in 0..k {
                let j = self.randbelow((n - i) as u64) as usize;
                result.push(pool[j].clone());
                pool[j] = pool[n - i - 1].clone();
            }
        } else {
            let mut selected = std::collections::HashSet::with_capacity(k);
            for _ in 0..k {
                let mut j = self.randbelow(n as u64) as usize;
                while !selected.insert(j) {
                    j = self.randbelow(n as u64) as usize;
                }
                result.push(population[j].clone());
            }
        }
        Some(result)
    }

    /// `uniform(a, b)`: `a + (b - a) * random()`.
    pub fn uniform(&mut self, a: f64, b: f64) -> f64 {
        a + (b - a) * self.random()
    }
}

/// Python's `a // b` (rounds toward negative infinity); `b != 0`.
fn floor_div(a: i128, b: i128) -> i128 {
    let q = a / b;
    if a % b != 0 && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// One draw as text, the same on both sides: integers in decimal, floats as their bits,
    /// sequences joined with commas, a draw Python refuses as `error`.
    fn run_ours(seed: i128, ops: &[Value]) -> Vec<String> {
        let mut r = PyRandom::new(seed);
        let int = |v: &Value| v.as_i64().unwrap();
        let join = |v: Vec<String>| v.join(",");
        let or_error = |v: Option<String>| v.unwrap_or_else(|| "error".into());
        ops.iter()
            .map(|op| {
                let a = op.as_array().unwrap();
                let n = |i: usize| int(&a[i]);
                match a[0].as_str().unwrap() {
                    "random" => r.random().to_bits().to_string(),
                    "getrandbits" => r.getrandbits(n(1) as u32).to_string(),
                    "randbelow" => r.randbelow(a[1].as_u64().unwrap()).to_string(),
                    "randrange" => or_error(r.randrange(n(1), n(2), n(3)).map(|v| v.to_string())),
                    "randint" => or_error(r.randint(n(1), n(2)).map(|v| v.to_string())),
                    "choice" => {
                        let seq: Vec<i64> = (0..n(1)).map(|i| i * 7).collect();
                        or_error(r.choice(&seq).map(|v| v.to_string()))
                    }
                    "choices" => {
                        let seq: Vec<i64> = (0..n(1)).collect();
                        or_error(
                            r.choices(&seq, n(2) as usize)
                                .map(|v| join(v.iter().map(|x| x.to_string()).collect())),
                        )
                    }
                    "shuffle" => {
                        let mut seq: Vec<i64> = (0..n(1)).collect();
                        r.shuffle(&mut seq);
                        join(seq.iter().map(|x| x.to_string()).collect())
                    }
                    "sample" => {
                        let seq: Vec<i64> = (0..n(1)).map(|i| 1000 + i).collect();
                        or_error(
                            r.sample(&seq, n(2) as usize)
                                .map(|v| join(v.iter().map(|x| x.to_string()).collect())),
                        )
                    }
                    "uniform" => r
                        .uniform(a[1].as_f64().unwrap(), a[2].as_f64().unwrap())
                        .to_bits()
                        .to_string(),
                    other => panic!("unknown op {other}"),
                }
            })
            .collect()
    }

    /// The same program run by python3's own `random.Random(seed)`.
    const PYTHON: &str = r#"
import json, random, struct, sys
def bits(x):
    return str(struct.unpack("<Q", struct.pack("<d", x))[0])
def join(xs):
    return ",".join(str(x) for x in xs)
out = []
for seed, ops in json.load(sys.stdin):
    r = random.Random(int(seed))
    res = []
    for op in ops:
        name, a = op[0], op[1:]
        try:
            if name == "random": v = bits(r.random())
            elif name == "getrandbits": v = str(r.getrandbits(a[0]))
            elif name == "randbelow": v = str(r._randbelow(a[0]))
            elif name == "randrange": v = str(r.randrange(a[0], a[1], a[2]))
            elif name == "randint": v = str(r.randint(a[0], a[1]))
            elif name == "choice": v = str(r.choice([i * 7 for i in range(a[0])]))
            elif name == "choices": v = join(r.choices(list(range(a[0])), k=a[1]))
            elif name == "shuffle":
                l = list(range(a[0])); r.shuffle(l); v = join(l)
            elif name == "sample": v = join(r.sample([1000 + i for i in range(a[0])], a[1]))
            elif name == "uniform": v = bits(r.uniform(a[0], a[1]))
            else: raise SystemExit("unknown op " + name)
        except (ValueError, IndexError):
            v = "error"
        res.append(v)
    out.append(res)
print(json.dumps(out))
"#;

    /// Many draws of every kind, mixed so that each starts from a state the others left.
    fn mixed_ops() -> Vec<Value> {
        let mut ops = Vec::new();
        for round in 0..25i64 {
            for k in [0, 1, 5, 31, 32, 33, 53, 63, 64] {
                ops.push(json!(["getrandbits", k]));
            }
            ops.push(json!(["random"]));
            for n in [
                1u64,
                2,
                3,
                7,
                1000,
                1 << 31,
                (1 << 32) - 1,
                1 << 32,
                (1 << 32) + 1,
                (1 << 53) + 3,
                u64::MAX,
            ] {
                ops.push(json!(["randbelow", n]));
            }
            ops.push(json!(["randrange", 0, 10 + round, 1]));
            ops.push(json!(["randrange", -50, 50, 7]));
            ops.push(json!(["randrange", 100, -3, -4]));
            ops.push(json!(["randrange", i64::MIN, i64::MAX, 1]));
            ops.push(json!(["randrange", 5, 5, 1]));
            ops.push(json!(["randrange", 0, 10, 0]));
            ops.push(json!(["randrange", 0, 10, -1]));
            ops.push(json!(["randint", 1, 6]));
            ops.push(json!(["randint", -3, -3]));
            ops.push(json!(["randint", 2, 1]));
            ops.push(json!(["choice", 1 + round]));
            ops.push(json!(["choice", 0]));
            ops.push(json!(["choices", 3, 1 + round % 7]));
            ops.push(json!(["choices", 0, 2]));
            ops.push(json!(["choices", 0, 0]));
            ops.push(json!(["shuffle", round % 12]));
            // sample: the pool branch (n <= 21 for k <= 5, n <= 21 + 4^3 for 6 <= k <= 21,
            // n <= 21 + 4^4 for 22 <= k <= 85) and the set branch, on both sides of edges.
            for (n, k) in [
                (0, 0),
                (5, 5),
                (21, 5),
                (22, 5),
                (40, 1),
                (85, 6),
                (86, 6),
                (106, 21),
                (107, 22),
                (500, 40),
                (3, 4),
            ] {
                ops.push(json!(["sample", n, k]));
            }
            ops.push(json!(["uniform", 0.3, 0.7]));
            ops.push(json!(["uniform", 5.0, -1.5]));
        }
        // Long enough to regenerate the 624-word state many times over.
        for _ in 0..1500 {
            ops.push(json!(["random"]));
        }
        ops.push(json!(["shuffle", 1140]));
        ops.push(json!(["sample", 1140, 300]));
        ops
    }

    #[test]
    fn every_draw_equals_cpythons() {
        let mixed = mixed_ops();
        let mut runs: Vec<(i128, Vec<Value>)> = [
            0i128,
            1,
            7,
            42,
            12345,
            -12345,
            (1 << 32) - 1,
            1 << 32,
            (1 << 40) + 5,
            u64::MAX as i128,
            12345678901234567890123456789,
            -(1 << 100) - 3,
            i128::MAX,
        ]
        .into_iter()
        .map(|s| (s, mixed.clone()))
        .collect();
        // A fresh generator's first shuffle (DSPy's order: seed 0) of the sizes the
        // benchmarks see, and the first draws of the seeds `memorycode templates` uses.
        for n in [2, 5, 164, 1140] {
            runs.push((0, vec![json!(["shuffle", n])]));
            runs.push((1, vec![json!(["shuffle", n])]));
        }
        for seed in [0u64, 7, 0x9E37_79B9_7F4A_7C15 ^ 3] {
            runs.push((
                i128::from(seed),
                vec![json!(["randint", 1, 1]), json!(["choices", 3, 4])],
            ));
        }
        let program: Vec<Value> = runs
            .iter()
            .map(|(seed, ops)| json!([seed.to_string(), ops]))
            .collect();
        let child = std::process::Command::new("python3")
            .args(["-c", PYTHON])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn();
        let mut child = match child {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                pivot_test_support::test_skip::skip(
                    "python3 is not on PATH to compare Python's random with",
                );
                return;
            }
            other => other.expect("python3 starts"),
        };
        let input = serde_json::to_vec(&program).unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || {
            use std::io::Write;
            stdin.write_all(&input).unwrap();
        });
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap();
        assert!(
            out.status.success(),
            "python3: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let want: Vec<Vec<String>> = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(want.len(), runs.len());
        let mut compared = 0;
        for ((seed, ops), want) in runs.iter().zip(&want) {
            let got = run_ours(*seed, ops);
            assert_eq!(got.len(), want.len());
            for (i, (g, w)) in got.iter().zip(want).enumerate() {
                assert_eq!(g, w, "seed {seed}, draw {i}: {}", ops[i]);
                compared += 1;
            }
        }
        // The program's refusals are there too (an empty range, a sample too large).
        assert!(want[0].iter().any(|v| v == "error"));
        assert!(compared > 20_000, "{compared} draws compared");
    }

    #[test]
    fn floor_division_is_pythons() {
        for (a, b, q) in [
            (7, 2, 3),
            (-7, 2, -4),
            (7, -2, -4),
            (-7, -2, 3),
            (6, -3, -2),
        ] {
            assert_eq!(floor_div(a, b), q, "{a} // {b}");
        }
    }
}
