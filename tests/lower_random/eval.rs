//! A CPU interpreter of the random programs' op DAGs (`programs.json`), one
//! tile block at a time. Every element carries an absolute error bound `e`:
//! 0 where the device must match bit for bit, grown by float reductions
//! (which the device may reassociate), exp (an approximation) and the ops
//! downstream of them, and infinite where a bound is lost (a comparison or
//! an integer conversion of an inexact value, an inexact infinity): such
//! elements are not checked.

use crate::num::Dt;
use serde_json::Value;

/// One element: a float value `f` or an integer value `i`, and its bound.
#[derive(Clone, Copy, Debug)]
pub struct El {
    pub f: f64,
    pub i: i64,
    pub e: f64,
}

impl El {
    fn float(f: f64, e: f64) -> El {
        El { f, i: 0, e }
    }
    fn int(i: i64, e: f64) -> El {
        El { f: 0.0, i, e }
    }
}

/// A tile of elements, row-major; a size-1 axis broadcasts.
pub struct Tile {
    pub dt: Dt,
    pub shape: [usize; 2],
    pub v: Vec<El>,
}

impl Tile {
    fn at(&self, r: usize, c: usize) -> El {
        let r = if self.shape[0] == 1 { 0 } else { r };
        let c = if self.shape[1] == 1 { 0 } else { c };
        self.v[r * self.shape[1] + c]
    }
}

/// A host array, row-major and dense.
pub struct Array {
    pub dt: Dt,
    pub rows: usize,
    pub cols: usize,
    pub v: Vec<El>,
}

fn usize_of(v: &Value) -> usize {
    v.as_u64().unwrap() as usize
}

fn shape_of(n: &Value) -> [usize; 2] {
    [usize_of(&n["shape"][0]), usize_of(&n["shape"][1])]
}

/// A tile of `shape` whose element (r, c) is `f` of the operands' elements.
fn map(dt: Dt, shape: [usize; 2], args: &[&Tile], f: impl Fn(&[El]) -> El) -> Tile {
    let mut v = Vec::with_capacity(shape[0] * shape[1]);
    for r in 0..shape[0] {
        for c in 0..shape[1] {
            let xs: Vec<El> = args.iter().map(|t| t.at(r, c)).collect();
            v.push(f(&xs));
        }
    }
    Tile { dt, shape, v }
}

/// The bound of a float result `r` computed from inexact operands (`e` is
/// the propagated part); 0 stays 0, non-finite results lose the bound.
fn bound(dt: Dt, r: f64, e: f64) -> f64 {
    if e == 0.0 {
        0.0
    } else if !r.is_finite() || !e.is_finite() {
        f64::INFINITY
    } else {
        e + dt.ulp(r.abs() + e)
    }
}

/// maxf / minf without NaN propagation: a NaN operand yields the other
/// one; -0 orders below +0 (so reductions do not depend on the order).
fn fmax(x: f64, y: f64, max: bool) -> f64 {
    if x.is_nan() {
        return y;
    }
    if y.is_nan() {
        return x;
    }
    let x_first = if x == y {
        x.is_sign_negative() != max
    } else {
        (x < y) != max
    };
    if x_first {
        x
    } else {
        y
    }
}

/// A binary op on two float elements, rounded to `dt`.
fn fbin(op: &str, dt: Dt, a: El, b: El) -> El {
    let (x, y) = (a.f, b.f);
    let exact = match op {
        "add" => x + y,
        "sub" => x - y,
        "mul" => x * y,
        "div" => x / y,
        "min" => return El::float(fmax(x, y, false), a.e.max(b.e)),
        "max" => return El::float(fmax(x, y, true), a.e.max(b.e)),
        _ => panic!("float op {op}"),
    };
    let r = dt.round(exact);
    let e = match op {
        _ if a.e == 0.0 && b.e == 0.0 => 0.0,
        _ if !r.is_finite() && sure_non_finite(op, a, b) => 0.0,
        "add" | "sub" => a.e + b.e,
        "mul" => x.abs() * b.e + y.abs() * a.e + a.e * b.e,
        _ if y.abs() > b.e => (a.e + r.abs() * b.e) / (y.abs() - b.e),
        _ => f64::INFINITY,
    };
    El::float(r, bound(dt, r, e))
}

/// Whether the non-finite result of `a op b` stays so (and keeps its sign)
/// whatever the inexact operand's error: an exact NaN operand, or an exact
/// infinity with a finite operand (of a sure sign for mul and div).
fn sure_non_finite(op: &str, a: El, b: El) -> bool {
    let exact = |p: El| p.e == 0.0 && !p.f.is_finite();
    let finite = |p: El| p.f.is_finite() && p.e.is_finite();
    let signed = |p: El| finite(p) && p.f.abs() > p.e;
    if (a.e == 0.0 && a.f.is_nan()) || (b.e == 0.0 && b.f.is_nan()) {
        return true;
    }
    match op {
        "add" | "sub" => (exact(a) && finite(b)) || (exact(b) && finite(a)),
        "mul" => (exact(a) && signed(b)) || (exact(b) && signed(a)),
        "div" => exact(a) && signed(b),
        _ => false,
    }
}

/// A binary op on two integer elements, wrapped to `dt`.
fn ibin(op: &str, dt: Dt, a: El, b: El) -> El {
    let (x, y) = (a.i, b.i);
    let r = match op {
        "add" => x.wrapping_add(y),
        "sub" => x.wrapping_sub(y),
        "mul" => x.wrapping_mul(y),
        "min" => x.min(y),
        "max" => x.max(y),
        "and" => x & y,
        "or" => x | y,
        "xor" => x ^ y,
        _ => panic!("integer op {op}"),
    };
    El::int(dt.wrap(r), inexact(&[a, b]))
}

/// Infinite when any integer operand is inexact.
fn inexact(xs: &[El]) -> f64 {
    if xs.iter().any(|x| x.e > 0.0) {
        f64::INFINITY
    } else {
        0.0
    }
}

fn bin(op: &str, dt: Dt, a: El, b: El) -> El {
    if dt.is_float() {
        fbin(op, dt, a, b)
    } else {
        ibin(op, dt, a, b)
    }
}

fn cmp(pred: &str, dt: Dt, a: El, b: El) -> El {
    let (x, y) = if dt.is_float() {
        (a.f, b.f)
    } else {
        (a.i as f64, b.i as f64)
    };
    let ord = |o: std::cmp::Ordering| a.i.cmp(&b.i) == o;
    let r = match (pred, dt.is_float()) {
        ("lt", true) => x < y,
        ("le", true) => x <= y,
        ("gt", true) => x > y,
        ("ge", true) => x >= y,
        ("eq", true) => x == y,
        ("ne", true) => x != y,
        ("lt", false) => ord(std::cmp::Ordering::Less),
        ("le", false) => !ord(std::cmp::Ordering::Greater),
        ("gt", false) => ord(std::cmp::Ordering::Greater),
        ("ge", false) => !ord(std::cmp::Ordering::Less),
        ("eq", false) => a.i == b.i,
        ("ne", false) => a.i != b.i,
        _ => panic!("predicate {pred}"),
    };
    let e = a.e + b.e;
    let unsure = e > 0.0 && (!dt.is_float() || !(x - y).abs().is_finite() || (x - y).abs() <= e);
    El::int(r as i64, if unsure { f64::INFINITY } else { 0.0 })
}

fn cast(from: Dt, to: Dt, a: El) -> El {
    match (from.is_float(), to.is_float()) {
        (true, true) => {
            let r = to.round(a.f);
            El::float(r, bound(to, r, a.e))
        }
        (false, true) => {
            let r = match to {
                Dt::F32 => a.i as f32 as f64,
                _ => to.round(a.i as f64),
            };
            El::float(r, inexact(&[a]))
        }
        (true, false) => {
            let sure = a.e == 0.0 || (a.f - a.e).trunc() == (a.f + a.e).trunc();
            El::int(
                to.wrap(a.f.trunc() as i64),
                if sure { 0.0 } else { f64::INFINITY },
            )
        }
        (false, false) => El::int(to.wrap(a.i), a.e),
    }
}

/// A sum, max or min of `xs` (any order on the device).
fn reduce(op: &str, dt: Dt, xs: &[El]) -> El {
    if !dt.is_float() {
        let r = xs.iter().map(|x| x.i).reduce(|a, b| match op {
            "sum" => a.wrapping_add(b),
            "max" => a.max(b),
            _ => a.min(b),
        });
        return El::int(dt.wrap(r.unwrap()), inexact(xs));
    }
    let e: f64 = xs.iter().map(|x| x.e).sum();
    if e.is_infinite() {
        return El::float(f64::NAN, f64::INFINITY);
    }
    if op == "sum" {
        let finite: Vec<f64> = xs.iter().map(|x| x.f).filter(|f| f.is_finite()).collect();
        let s: f64 = finite.iter().fold(0.0, |a, x| a + x);
        let mag: f64 = finite.iter().map(|x| x.abs()).sum();
        let eps = dt.ulp(1.0);
        let e = e + (xs.len() as f64 + 1.0) * eps * mag;
        let (pos, neg) = (
            xs.iter().any(|x| x.f == f64::INFINITY),
            xs.iter().any(|x| x.f == f64::NEG_INFINITY),
        );
        if xs.iter().any(|x| x.f.is_nan()) || (pos && neg) {
            return El::float(f64::NAN, 0.0);
        }
        if pos || neg {
            // finite partial sums may overflow the other way only if large
            let sure = mag + e < dt.max() / 2.0;
            let r = if pos {
                f64::INFINITY
            } else {
                f64::NEG_INFINITY
            };
            return El::float(r, if sure { 0.0 } else { f64::INFINITY });
        }
        let r = dt.round(s);
        // the device may or may not add the identity +0 to all -0 terms
        if xs.iter().all(|x| x.f == 0.0 && x.f.is_sign_negative()) {
            return El::float(r, e.max(f64::MIN_POSITIVE));
        }
        return El::float(r, bound(dt, r, e));
    }
    if xs.iter().all(|x| x.f.is_nan()) {
        // the device may fold in the identity
        return El::float(f64::NAN, f64::INFINITY);
    }
    let r = xs
        .iter()
        .map(|x| x.f)
        .reduce(|a, b| fmax(a, b, op == "max"))
        .unwrap();
    El::float(r, e)
}

/// Evaluates the program for tile block (`bm`, `bn`); `trips` is the loop
/// trip count parameter.
pub fn block(prog: &Value, inputs: &[Array], bm: usize, bn: usize, trips: i64) -> Tile {
    let tile = [usize_of(&prog["tile"][0]), usize_of(&prog["tile"][1])];
    let mut vals: Vec<Tile> = Vec::new();
    for n in prog["nodes"].as_array().unwrap() {
        let op = n["op"].as_str().unwrap();
        let dt = Dt::parse(n["dtype"].as_str().unwrap());
        let shape = shape_of(n);
        let args: Vec<&Tile> = n["args"]
            .as_array()
            .map(|a| a.iter().map(|i| &vals[usize_of(i)]).collect())
            .unwrap_or_default();
        let t = match op {
            "load" => load(&inputs[usize_of(&n["input"])], n, tile, bm, bn),
            "const" | "param" => {
                let x = if op == "const" {
                    &n["value"]
                } else {
                    &prog["scalar"]
                };
                let el = if dt.is_float() {
                    El::float(dt.round(x.as_f64().unwrap()), 0.0)
                } else {
                    El::int(dt.wrap(x.as_i64().unwrap()), 0.0)
                };
                map(dt, shape, &[], |_| el)
            }
            "sum" | "max" | "min" if n.get("axis").is_some() => {
                let a = args[0];
                let axis = usize_of(&n["axis"]);
                let mut v = Vec::new();
                for r in 0..shape[0] {
                    for c in 0..shape[1] {
                        let xs: Vec<El> = (0..a.shape[axis])
                            .map(|k| if axis == 0 { a.at(k, c) } else { a.at(r, k) })
                            .collect();
                        v.push(reduce(op, dt, &xs));
                    }
                }
                Tile { dt, shape, v }
            }
            "add" | "sub" | "mul" | "div" | "min" | "max" | "and" | "or" | "xor" => {
                map(dt, shape, &args, |x| bin(op, dt, x[0], x[1]))
            }
            "neg" | "abs" | "not" => map(dt, shape, &args, |x| {
                let a = x[0];
                match (op, dt.is_float()) {
                    ("neg", true) => El::float(-a.f, a.e),
                    ("abs", true) => El::float(a.f.abs(), a.e),
                    ("neg", false) => El::int(dt.wrap(a.i.wrapping_neg()), a.e),
                    ("not", false) => El::int(dt.wrap(!a.i), a.e),
                    _ => El::int(dt.wrap(a.i.wrapping_abs()), a.e),
                }
            }),
            "shl" | "shr" => {
                let k = n["amount"].as_u64().unwrap() as u32;
                map(dt, shape, &args, |x| {
                    let a = x[0].i;
                    let r = match (op, dt) {
                        ("shl", _) => a.wrapping_shl(k),
                        (_, Dt::I16) => ((a as i16) >> k) as i64,
                        (_, Dt::I32) => ((a as i32) >> k) as i64,
                        (_, Dt::U32) => ((a as u32) >> k) as i64,
                        _ => a >> k,
                    };
                    El::int(dt.wrap(r), x[0].e)
                })
            }
            "cmp" => {
                let pred = n["pred"].as_str().unwrap();
                let adt = args[0].dt;
                map(dt, shape, &args, |x| cmp(pred, adt, x[0], x[1]))
            }
            "where" => map(dt, shape, &args, |x| {
                let pick = if x[0].i != 0 { x[1] } else { x[2] };
                if x[0].e > 0.0 {
                    El {
                        e: f64::INFINITY,
                        ..pick
                    }
                } else {
                    pick
                }
            }),
            "cast" => {
                let from = args[0].dt;
                map(dt, shape, &args, |x| cast(from, dt, x[0]))
            }
            "floordiv" | "mod" => map(dt, shape, &args, |x| {
                let (a, d) = (x[0].i, x[1].i);
                let (mut q, mut r) = (a.wrapping_div(d), a.wrapping_rem(d));
                if r != 0 && (r < 0) != (d < 0) {
                    q -= 1;
                    r += d;
                }
                El::int(dt.wrap(if op == "mod" { r } else { q }), inexact(x))
            }),
            "sqrt" => map(dt, shape, &args, |x| {
                let a = x[0];
                let r = match dt {
                    Dt::F32 => (a.f as f32).sqrt() as f64,
                    _ => dt.round(a.f.sqrt()),
                };
                let e = match a.e {
                    0.0 => 0.0,
                    e if a.f - e > 0.0 => e / (a.f - e).sqrt(),
                    _ => f64::INFINITY,
                };
                El::float(r, bound(dt, r, e))
            }),
            "exp" => map(dt, shape, &args, |x| {
                let a = x[0];
                let r = dt.round(a.f.exp());
                // the device's exp is within 4 ulp of f32
                let e = r.abs() * a.e.exp_m1() + 4.0 * Dt::F32.ulp(r.abs());
                El::float(r, bound(dt, r, e))
            }),
            "floor" | "ceil" => map(dt, shape, &args, |x| {
                let a = x[0];
                let r = if op == "floor" {
                    a.f.floor()
                } else {
                    a.f.ceil()
                };
                // a bound that contains no integer keeps the result exact
                let sure = a.e == 0.0
                    || (op == "floor" && (a.f - a.e).floor() == (a.f + a.e).floor())
                    || (op == "ceil" && (a.f - a.e).ceil() == (a.f + a.e).ceil());
                El::float(r, if sure { 0.0 } else { f64::INFINITY })
            }),
            "cat" => {
                let (a, b) = (args[0], args[1]);
                let axis = usize_of(&n["axis"]);
                let mut v = Vec::new();
                for r in 0..shape[0] {
                    for c in 0..shape[1] {
                        let (k, half) = if axis == 0 {
                            (r, a.shape[0])
                        } else {
                            (c, a.shape[1])
                        };
                        let (src, k) = if k < half { (a, k) } else { (b, k - half) };
                        v.push(if axis == 0 {
                            src.at(k, c)
                        } else {
                            src.at(r, k)
                        });
                    }
                }
                Tile { dt, shape, v }
            }
            "iota" => {
                let axis = usize_of(&n["axis"]);
                let mut v = Vec::new();
                for r in 0..shape[0] {
                    for c in 0..shape[1] {
                        v.push(El::int([r, c][axis] as i64, 0.0));
                    }
                }
                Tile { dt, shape, v }
            }
            "broadcast" => map(dt, shape, &args, |x| x[0]),
            "transpose" => {
                let a = args[0];
                let mut v = Vec::new();
                for r in 0..shape[0] {
                    for c in 0..shape[1] {
                        v.push(a.at(c, r));
                    }
                }
                Tile { dt, shape, v }
            }
            "reshape" => Tile {
                dt,
                shape,
                v: args[0].v.clone(),
            },
            "loop" => {
                let step = n["step"].as_str().unwrap();
                let c = &n["c"];
                let mut acc = map(dt, shape, &args[..1], |x| x[0]);
                for _ in 0..trips {
                    acc = map(dt, shape, &[&acc, args[1]], |x| match step {
                        "fma" => fma(dt, x[0], c, x[1]),
                        _ => bin(step, dt, x[0], x[1]),
                    });
                }
                acc
            }
            "if" => {
                if trips > n["above"].as_i64().unwrap() {
                    map(dt, shape, &args[..1], |x| neg(dt, x[0]))
                } else {
                    let other = n["else"].as_str().unwrap();
                    map(dt, shape, &args, |x| bin(other, dt, x[0], x[1]))
                }
            }
            "loop_load" => {
                let step = n["step"].as_str().unwrap();
                let c = &n["c"];
                let a = &inputs[usize_of(&n["input"])];
                let mut acc = map(dt, shape, &args[..1], |x| x[0]);
                for t in 0..trips as usize {
                    let (lm, ln) = if usize_of(&n["axis"]) == 0 {
                        (t, bn)
                    } else {
                        (bm, t)
                    };
                    let x = load(a, n, tile, lm, ln);
                    let x = map(dt, shape, &[&x], |x| {
                        if n.get("isnan").is_some() {
                            El::int(x[0].f.is_nan() as i64, 0.0)
                        } else {
                            cast(a.dt, dt, x[0])
                        }
                    });
                    acc = map(dt, shape, &[&acc, &x], |x| match step {
                        "fma" => fma(dt, x[0], c, x[1]),
                        _ => bin(step, dt, x[0], x[1]),
                    });
                }
                acc
            }
            _ => panic!("unknown op {op}"),
        };
        assert_eq!(t.v.len(), shape[0] * shape[1], "{op}");
        vals.push(t);
    }
    vals.swap_remove(usize_of(&prog["out"]))
}

/// `-a` (integers wrap).
fn neg(dt: Dt, a: El) -> El {
    if dt.is_float() {
        El::float(-a.f, a.e)
    } else {
        El::int(dt.wrap(a.i.wrapping_neg()), a.e)
    }
}

/// Tile (`bm`, `bn`) of an input, padded as the load node `n` says.
fn load(a: &Array, n: &Value, tile: [usize; 2], bm: usize, bn: usize) -> Tile {
    let f = match n["padding"].as_str().unwrap() {
        "zero" => 0.0,
        "neg_zero" => -0.0,
        "nan" => f64::NAN,
        "pos_inf" => f64::INFINITY,
        "neg_inf" => f64::NEG_INFINITY,
        p => panic!("padding {p}"),
    };
    let pad = El { f, i: 0, e: 0.0 };
    let mut v = Vec::new();
    for r in 0..tile[0] {
        for c in 0..tile[1] {
            let (gr, gc) = (bm * tile[0] + r, bn * tile[1] + c);
            v.push(if gr < a.rows && gc < a.cols {
                a.v[gr * a.cols + gc]
            } else {
                pad
            });
        }
    }
    Tile {
        dt: a.dt,
        shape: tile,
        v,
    }
}

/// `a * c + b` with one rounding (integers wrap).
fn fma(dt: Dt, a: El, c: &Value, b: El) -> El {
    if !dt.is_float() {
        let r = a.i.wrapping_mul(c.as_i64().unwrap()).wrapping_add(b.i);
        return El::int(dt.wrap(r), inexact(&[a, b]));
    }
    let c = c.as_f64().unwrap();
    let r = match dt {
        Dt::F32 => (a.f as f32).mul_add(c as f32, b.f as f32) as f64,
        Dt::F64 => a.f.mul_add(c, b.f),
        _ => dt.round(a.f * c + b.f),
    };
    let e = if a.e == 0.0 && b.e == 0.0 {
        0.0
    } else {
        a.e * c.abs() + b.e
    };
    El::float(r, bound(dt, r, e))
}
