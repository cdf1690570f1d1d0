use super::*;

fn he(check: &str) -> Problem {
    Problem {
        task_id: "HumanEval/0".into(),
        instruct_prompt: String::new(),
        code_prompt: "def f(x):\n".into(),
        canonical_solution: "    return x\n".into(),
        test: crate::humaneval::to_unittest(check, "f").unwrap(),
        entry_point: "f".into(),
        complete_prompt: String::new(),
    }
}

/// The twin's source differs from the real one only inside the changed expression: the
/// same lines, names and statements around it.
fn only_changed(real: &str, twin: &Twin) {
    let r: Vec<&str> = real.lines().collect();
    let t: Vec<&str> = twin.test.lines().collect();
    assert_eq!(r.len(), t.len(), "{}", twin.test);
    for (i, (a, b)) in r.iter().zip(&t).enumerate() {
        if a != b {
            let line = i as u32 + 1;
            assert!(
                twin.changes
                    .iter()
                    .any(|c| c.line <= line && line <= c.fail.1.max(c.line)),
                "line {line} changed outside any change: {a:?} -> {b:?}"
            );
        }
    }
    for marker in ["_twin", "7919", "_TwinUnequal", "~'", "~\""] {
        assert!(
            !twin.test.contains(marker) || real.contains(marker),
            "{marker} in {}",
            twin.test
        );
    }
}

#[test]
fn humaneval_twins_change_one_assertion_each_and_nothing_else() {
    let check = "METADATA = {}\n\n\ndef check(candidate):\n    assert True\n    assert candidate(1) == 1\n    assert abs(candidate(2.0) - 2.0) < 1e-6\n    assert candidate(3) == 4\n";
    let mut rng = Rng::with_seed(1);
    let p = he(check);
    let real = humaneval_check(&p).unwrap();
    let ts = candidates(&p, &mut rng);
    assert!(ts.len() >= 3, "{ts:?}");
    // Value twins on the candidate first, one change each, the rest of `check` as it is.
    for t in &ts[..3] {
        assert_eq!(t.kind, TwinKind::Value);
        assert_eq!(t.changes.len(), 1);
        only_changed(real, t);
        assert_eq!(t.test.matches("def check(candidate):").count(), 1);
        assert!(t.test.contains("    assert candidate(3) == 4\n") || t.changes[0].line == 8);
    }
    let lines: std::collections::BTreeSet<u32> =
        ts[..3].iter().map(|t| t.changes[0].line).collect();
    assert_eq!(lines, [6, 7, 8].into_iter().collect());
    // `assert True` can only be turned around, and comes after every value twin.
    let inv = ts.iter().find(|t| t.kind == TwinKind::Inverted).unwrap();
    assert!(inv.test.contains("assert not (True)"));
    assert_eq!(inv.changes[0].fail, (5, 5));
}

#[test]
fn a_tolerance_is_never_straddled() {
    let check = "def check(candidate):\n    assert abs(candidate(1) - 100000) < 8000\n";
    for seed in 0..40 {
        let ts = candidates(&he(check), &mut Rng::with_seed(seed));
        let t = &ts[0];
        let after = &t.changes[0].after;
        let v: f64 = after
            .split(" - ")
            .nth(1)
            .unwrap()
            .split(')')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!((v - 100000.0).abs() > 16000.0, "{after}");
    }
}

#[test]
fn values_are_drawn_per_run() {
    let check = "def check(candidate):\n    assert candidate('a') == 123456\n";
    let a: std::collections::BTreeSet<String> = (0..20)
        .map(|s| {
            candidates(&he(check), &mut Rng::with_seed(s))[0].changes[0]
                .after
                .clone()
        })
        .collect();
    assert!(a.len() > 5, "{a:?}");
}

#[test]
fn unittest_twins_keep_every_method_and_change_one_assertion_per_method() {
    let test = "import unittest\nclass TestCases(unittest.TestCase):\n    def test_a(self):\n        r = task_func()\n        self.assertIsInstance(r, list)\n        self.assertEqual(r, [1, 'x'])\n        self.assertEqual(len(r), 2)\n    def test_b(self):\n        expected = pd.DataFrame({'a': [1]})\n        pd.testing.assert_frame_equal(task_func(), expected)\n    def test_c(self):\n        with self.assertRaises(ValueError):\n            self.assertEqual(task_func(), 3)\n        self.assertTrue(task_func() > 2)\n    def test_d(self):\n        if x:\n            return\n        self.assertEqual(task_func(), 3)\n    @unittest.skip('no')\n    def test_e(self):\n        self.assertEqual(task_func(), 3)\n";
    let ts = unittest_twins(test, &mut Rng::with_seed(5));
    assert_eq!(ts.len(), 2, "test_a has two value assertions: {ts:?}");
    for t in &ts {
        only_changed(test, t);
        for m in ["test_a", "test_b", "test_c", "test_d", "test_e"] {
            assert!(t.test.contains(&format!("def {m}(self):")), "{m}");
        }
    }
    let first: Vec<_> = ts[0]
        .changes
        .iter()
        .map(|c| c.test.clone().unwrap())
        .collect();
    assert_eq!(first, ["test_a", "test_b", "test_c"]);
    let second: Vec<_> = ts[1]
        .changes
        .iter()
        .map(|c| c.test.clone().unwrap())
        .collect();
    assert_eq!(second, ["test_a"]);
    // test_b's expected value is changed where it is bound; it must fail at the assertion.
    let b = ts[0]
        .changes
        .iter()
        .find(|c| c.test.as_deref() == Some("test_b"))
        .unwrap();
    assert_eq!((b.line, b.fail), (9, (10, 10)));
    // test_c's value is the exception it expects: another one stands for it.
    let c = ts[0]
        .changes
        .iter()
        .find(|c| c.test.as_deref() == Some("test_c"))
        .unwrap();
    assert_eq!((c.kind, c.fail), (TwinKind::Value, (12, 13)));
    assert!(!ts[0].test.contains("self.assertRaises(ValueError)"));
    assert!(ts[0].test.contains("self.assertTrue(task_func() > 2)"));
}

#[test]
fn expected_first_and_computed_values() {
    let test = "class TestCases(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(10, task_func())\n    def test_b(self):\n        data = [1, 2]\n        self.assertEqual(task_func(data), data)\n";
    let ts = unittest_twins(test, &mut Rng::with_seed(9));
    let t = &ts[0];
    only_changed(test, t);
    assert!(
        !t.test.contains("self.assertEqual(10, task_func())"),
        "{}",
        t.test
    );
    // A computed expected value, used as an input too: the assertion turns.
    assert!(
        t.test
            .contains("self.assertNotEqual(task_func(data), data)"),
        "{}",
        t.test
    );
}

#[test]
fn an_assert_raises_test_expects_another_exception() {
    let test = "class TestCases(unittest.TestCase):\n    def test_a(self):\n        with self.assertRaises(ValueError):\n            task_func(-1)\n    def test_b(self):\n        self.assertRaises(TypeError, task_func, 'x')\n";
    let ts = unittest_twins(test, &mut Rng::with_seed(2));
    let t = &ts[0];
    only_changed(test, t);
    assert_eq!(t.changes.len(), 2);
    assert!(!t.test.contains("assertRaises(ValueError)"), "{}", t.test);
    assert!(!t.test.contains("assertRaises(TypeError,"), "{}", t.test);
    assert_eq!(
        t.changes[0].fail,
        (3, 4),
        "the whole `with`: the escaping error is raised in it"
    );
}

#[test]
fn tables_helpers_and_arithmetic_feed_assertions() {
    let test = "import unittest\n\nTABLE = [(2, 4), (3, 9)]\n\n\nclass TestCases(unittest.TestCase):\n    def check_square(self, x, want):\n        self.assertEqual(task_func(x), want)\n\n    def test_table(self):\n        for x, want in TABLE:\n            self.assertEqual(task_func(x), want)\n\n    def test_helper(self):\n        self.check_square(3, 9)\n\n    def test_expected_first(self):\n        expected = 3 ** 2\n        self.assertEqual(expected, task_func(3))\n";
    let ts = unittest_twins(test, &mut Rng::with_seed(4));
    let t = &ts[0];
    only_changed(test, t);
    let by: std::collections::BTreeMap<String, &Change> = t
        .changes
        .iter()
        .map(|c| (c.test.clone().unwrap(), c))
        .collect();
    assert_eq!(by.len(), 3, "{:?}", t.changes);
    assert_eq!(
        (by["test_table"].line, by["test_table"].fail),
        (3, (12, 12))
    );
    assert!(!t.test.contains("TABLE = [(2, 4),"), "{}", t.test);
    assert_eq!(by["test_helper"].fail, (15, 15));
    assert!(!t.test.contains("self.check_square(3, 9)"), "{}", t.test);
    assert_eq!(by["test_expected_first"].line, 18);
}

#[test]
fn branches_and_fixtures_are_changed_too() {
    let test = "import unittest\n\n\nclass TestCases(unittest.TestCase):\n    def setUp(self):\n        self.assertEqual(task_func(2), 4)\n        self.value = task_func(3)\n\n    def tearDown(self):\n        self.assertEqual(self.value, 9)\n\n    def test_if(self):\n        if task_func is not None:\n            self.assertEqual(task_func(3), 9)\n\n    def test_try(self):\n        try:\n            self.assertEqual(task_func(4), 16)\n        except ZeroDivisionError:\n            pass\n\n    def test_swallowed(self):\n        try:\n            self.assertEqual(task_func(5), 25)\n        except Exception:\n            pass\n";
    let ts = unittest_twins(test, &mut Rng::with_seed(3));
    for t in &ts {
        only_changed(test, t);
    }
    // The methods' twin: `if` and `try` bodies changed; a body whose handler catches the
    // failure is not.
    let methods: Vec<_> = ts[0]
        .changes
        .iter()
        .map(|c| (c.test.clone().unwrap(), c.fail, c.fixture))
        .collect();
    assert_eq!(
        methods,
        [
            ("test_if".to_string(), (14, 14), false),
            ("test_try".to_string(), (18, 18), false)
        ]
    );
    // Then one twin per fixture, each with its one change.
    let fixtures: Vec<_> = ts[1..]
        .iter()
        .filter(|t| t.changes.iter().any(|c| c.fixture))
        .map(|t| {
            assert_eq!(t.changes.len(), 1);
            (t.changes[0].test.clone().unwrap(), t.changes[0].fail)
        })
        .collect();
    assert_eq!(
        fixtures,
        [
            ("setUp".to_string(), (6, 6)),
            ("tearDown".to_string(), (10, 10))
        ]
    );
    assert!(ts[1].changes[0].fixture && ts[2].changes[0].fixture);
}

#[test]
fn a_pure_builtin_of_values_is_an_expected_value() {
    let check = "def check(candidate):\n    assert candidate([3, 1, 2]) == sorted([3, 1, 2])\n";
    let p = he(check);
    let ts = candidates(&p, &mut Rng::with_seed(6));
    assert_eq!(ts[0].kind, TwinKind::Value, "{ts:?}");
    only_changed(humaneval_check(&p).unwrap(), &ts[0]);
    assert!(ts[0]
        .test
        .contains("assert candidate([3, 1, 2]) == sorted(["));
    assert!(!ts[0].test.contains("sorted([3, 1, 2])"), "{}", ts[0].test);
}

#[test]
fn a_computed_expected_value_gets_an_element_or_a_shift() {
    // Round 4's two forges on computed values: an object equal to every list, an int equal
    // to everything, inside `all(...)`.
    let test = "class TestCases(unittest.TestCase):\n    def test_sorted(self):\n        data = [3, 1, 2]\n        self.assertEqual(task_func(data), sorted(data))\n    def test_all(self):\n        self.assertTrue(all(task_func(x) == x * x for x in range(6)))\n    def test_near(self):\n        x = 2\n        self.assertAlmostEqual(task_func(x), x * 2, delta=0.5)\n";
    let ts = unittest_twins(test, &mut Rng::with_seed(4));
    let t = &ts[0];
    only_changed(test, t);
    assert_eq!(t.kind, TwinKind::Value, "{t:?}");
    assert!(
        t.test
            .contains("self.assertEqual(task_func(data), [*sorted(data), "),
        "{}",
        t.test
    );
    assert!(
        t.test
            .contains("self.assertTrue(all(task_func(x) == (x * x) + "),
        "{}",
        t.test
    );
    // A tolerance: no shift (it could fall inside), the assertion turns.
    assert!(
        t.test
            .contains("self.assertNotAlmostEqual(task_func(x), x * 2, delta=0.5)"),
        "{}",
        t.test
    );
    // HumanEval's `check` the same way.
    let check = "def check(candidate):\n    assert all(candidate(x) == len(str(x)) for x in [1, 22])\n    assert candidate([2, 1]) == list(reversed([2, 1]))\n";
    let p = he(check);
    let ts = candidates(&p, &mut Rng::with_seed(2));
    let shown: Vec<&str> = ts.iter().map(|t| t.changes[0].after.as_str()).collect();
    assert!(
        shown
            .iter()
            .any(|a| a.starts_with("assert all(candidate(x) == (len(str(x))) + ")),
        "{shown:?}"
    );
    assert!(ts.iter().all(|t| t.kind == TwinKind::Value), "{ts:?}");
}
