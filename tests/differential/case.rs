//! Differential cases: a kernel's TileIR bytecode plus a launch description
//! (`NAME.tileir` + `NAME.json`, see `tests/data/differential/README.md`),
//! deterministic inputs for a seed, and the element comparison.

use serde_json::Value;
use std::path::Path;

/// An element type of a buffer or a scalar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    /// A boolean, one byte (0 or 1).
    I1,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    Bf16,
    F32,
    F64,
    /// float8 e4m3fn (no infinities; NaN is S.1111.111).
    F8e4m3,
    F8e5m2,
}

impl Elem {
    /// The type named in a case (`f32`, `bf16`, `i1`...).
    pub fn parse(s: &str) -> Result<Elem, String> {
        Ok(match s {
            "i1" | "bool" => Elem::I1,
            "i8" => Elem::I8,
            "i16" => Elem::I16,
            "i32" => Elem::I32,
            "i64" => Elem::I64,
            "u8" => Elem::U8,
            "u16" => Elem::U16,
            "u32" => Elem::U32,
            "u64" => Elem::U64,
            "f16" => Elem::F16,
            "bf16" => Elem::Bf16,
            "f32" => Elem::F32,
            "f64" => Elem::F64,
            "f8e4m3" => Elem::F8e4m3,
            "f8e5m2" => Elem::F8e5m2,
            _ => return Err(format!("unknown element type {s:?}")),
        })
    }
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Elem::I1 | Elem::I8 | Elem::U8 | Elem::F8e4m3 | Elem::F8e5m2 => 1,
            Elem::I16 | Elem::U16 | Elem::F16 | Elem::Bf16 => 2,
            Elem::I32 | Elem::U32 | Elem::F32 => 4,
            Elem::I64 | Elem::U64 | Elem::F64 => 8,
        }
    }
    /// Exponent and mantissa bits of a float type.
    pub fn float(self) -> Option<(u32, u32)> {
        match self {
            Elem::F16 => Some((5, 10)),
            Elem::Bf16 => Some((8, 7)),
            Elem::F32 => Some((8, 23)),
            Elem::F64 => Some((11, 52)),
            Elem::F8e4m3 => Some((4, 3)),
            Elem::F8e5m2 => Some((5, 2)),
            _ => None,
        }
    }
    /// True for the signed integer types.
    fn signed(self) -> bool {
        matches!(self, Elem::I8 | Elem::I16 | Elem::I32 | Elem::I64)
    }
    /// The element's bits as a little-endian integer.
    pub fn bits(self, b: &[u8]) -> u64 {
        let mut x = [0u8; 8];
        x[..self.size()].copy_from_slice(&b[..self.size()]);
        u64::from_le_bytes(x)
    }
    /// True for a NaN bit pattern.
    pub fn is_nan(self, bits: u64) -> bool {
        match self {
            Elem::F8e4m3 => bits & 0x7f == 0x7f,
            _ => match self.float() {
                Some((e, m)) => {
                    let emax = (1u64 << e) - 1;
                    (bits >> m) & emax == emax && bits & ((1u64 << m) - 1) != 0
                }
                None => false,
            },
        }
    }
    /// The value of a float element (exact in f64).
    pub fn to_f64(self, bits: u64) -> f64 {
        let Some((e, m)) = self.float() else {
            return if self.signed() {
                let sh = 64 - 8 * self.size() as u32;
                ((bits << sh) as i64 >> sh) as f64
            } else {
                bits as f64
            };
        };
        if self.is_nan(bits) {
            return f64::NAN;
        }
        let sign = if bits >> (e + m) & 1 == 1 { -1.0 } else { 1.0 };
        let emax = (1u64 << e) - 1;
        let bias = (1i32 << (e - 1)) - 1;
        let ex = (bits >> m) & emax;
        let man = (bits & ((1u64 << m) - 1)) as f64;
        let scale = 2f64.powi(m as i32);
        sign * if ex == 0 {
            man / scale * 2f64.powi(1 - bias)
        } else if ex == emax && self != Elem::F8e4m3 {
            f64::INFINITY
        } else {
            (1.0 + man / scale) * 2f64.powi(ex as i32 - bias)
        }
    }
    /// Encodes a value: integers wrap, floats round to nearest even (from
    /// an f64 that is exact in f32 where the type is narrower).
    pub fn encode(self, v: f64, out: &mut Vec<u8>) {
        let bits: u64 = match self {
            Elem::F64 => v.to_bits(),
            Elem::F32 => (v as f32).to_bits() as u64,
            Elem::F16 => f32_to_small(v as f32, 5, 10),
            Elem::Bf16 => f32_to_small(v as f32, 8, 7),
            Elem::F8e5m2 => f32_to_small(v as f32, 5, 2),
            // no infinities: the nearest of the finite values (ties to the
            // even pattern), NaN past 464 (half-way to the next binade step)
            Elem::F8e4m3 => {
                let sign = if v.is_sign_negative() { 0x80 } else { 0 };
                let a = v.abs();
                if a.is_nan() || a >= 464.0 {
                    sign | 0x7f
                } else {
                    let best = (0..0x7fu64)
                        .min_by(|x, y| {
                            let (dx, dy) =
                                ((self.to_f64(*x) - a).abs(), (self.to_f64(*y) - a).abs());
                            dx.total_cmp(&dy).then((x & 1).cmp(&(y & 1)))
                        })
                        .unwrap();
                    sign | best
                }
            }
            Elem::I1 => (v as i64 & 1) as u64,
            _ => v as i64 as u64,
        };
        out.extend_from_slice(&bits.to_le_bytes()[..self.size()]);
    }
    /// Encodes an integer (wrapping to the width).
    pub fn encode_int(self, v: i64, out: &mut Vec<u8>) {
        if self.float().is_some() {
            return self.encode(v as f64, out);
        }
        let v = if self == Elem::I1 { v & 1 } else { v };
        out.extend_from_slice(&(v as u64).to_le_bytes()[..self.size()]);
    }
}

/// f32 to a narrower IEEE-style format with `e` exponent and `m` mantissa
/// bits, round to nearest even, infinities for overflow.
fn f32_to_small(x: f32, e: u32, m: u32) -> u64 {
    let b = x.to_bits();
    let sign = ((b >> 31) as u64) << (e + m);
    let emax = (1u64 << e) - 1;
    if x.is_nan() {
        return sign | (emax << m) | (1 << (m - 1));
    }
    let a = x.abs() as f64;
    if a.is_infinite() {
        return sign | (emax << m);
    }
    let bias = (1i32 << (e - 1)) - 1;
    // the binade's exponent, clamped to the smallest normal one
    let mut exp = if a == 0.0 { 0 } else { a.log2().floor() as i32 };
    if a != 0.0 && 2f64.powi(exp) > a {
        exp -= 1;
    }
    if a != 0.0 && 2f64.powi(exp + 1) <= a {
        exp += 1;
    }
    let exp = exp.max(1 - bias);
    let q = 2f64.powi(exp - m as i32);
    let n = (a / q).round_ties_even();
    let mut ex = (exp + bias) as u64;
    let mut man = n as u64;
    if man >= 2 << m {
        man >>= 1;
        ex += 1;
    }
    if man < 1 << m {
        // subnormal (only reachable at the smallest exponent)
        return sign | man;
    }
    if ex >= emax {
        return sign | (emax << m);
    }
    sign | (ex << m) | (man - (1 << m))
}

/// How a buffer is filled (`init` in a case).
#[derive(Clone, Debug, PartialEq)]
pub enum Init {
    /// Floats with NaN, ±Inf, -0 and subnormals mixed in; integers of every
    /// magnitude.
    Random,
    /// Random finite floats (integers as `Random`).
    Finite,
    /// Small integers (-8 to 8); for floats with NaN, ±Inf and -0 mixed
    /// in: sums of them are exact in any order.
    Ints,
    /// Random normal floats of magnitude about 2^-6 to 2^6 and ±0: no NaN,
    /// infinity, subnormal or huge value (integers as `Random`).
    /// `normal:E`: the same with magnitudes below 2^(E+1) (E at most 6).
    Normal(i64),
    /// All zero bytes.
    Zeros,
    /// The element index.
    Iota,
    /// Integers uniform in `[lo, hi)` (for floats, those integers' values).
    Range(i64, i64),
    /// The same without 0 (divisors).
    NonZero(i64, i64),
    /// Every pair of the element type's special values
    /// ([`special_values`], `n` of them): element `i` holds the
    /// `(i / n) mod n`-th (`pairs:0`) or the `i mod n`-th (`pairs:1`), the
    /// same at every seed.
    Pairs(bool),
    /// An i64 table of `count` rows (base address, length, stride 1) of
    /// further buffers of `elem` and `len` elements, random, which the
    /// runner allocates after the parameters' buffers (a list of arrays).
    Arrays {
        elem: Elem,
        count: usize,
        len: usize,
    },
}

impl Init {
    fn parse(s: &str) -> Result<Init, String> {
        Ok(match s {
            "random" => Init::Random,
            "finite" => Init::Finite,
            "normal" => Init::Normal(6),
            "ints" => Init::Ints,
            "zeros" => Init::Zeros,
            "iota" => Init::Iota,
            _ => {
                let parts: Vec<&str> = s.split(':').collect();
                let int = |x: &str| x.parse::<i64>().map_err(|e| format!("{s}: {e}"));
                match parts[..] {
                    ["range" | "nonzero", lo, hi] => {
                        let (lo, hi) = (int(lo)?, int(hi)?);
                        if lo >= hi || parts[0] == "nonzero" && lo == 0 && hi == 1 {
                            return Err(format!("{s}: empty range"));
                        }
                        if parts[0] == "range" {
                            Init::Range(lo, hi)
                        } else {
                            Init::NonZero(lo, hi)
                        }
                    }
                    ["pairs", "0"] => Init::Pairs(false),
                    ["pairs", "1"] => Init::Pairs(true),
                    ["normal", e] => Init::Normal(int(e)?.clamp(-6, 6)),
                    ["arrays", elem, count, len] => Init::Arrays {
                        elem: Elem::parse(elem)?,
                        count: int(count)? as usize,
                        len: int(len)? as usize,
                    },
                    _ => return Err(format!("unknown init {s:?}")),
                }
            }
        })
    }
}

/// One entry parameter.
#[derive(Clone, Debug)]
pub enum Arg {
    /// A device buffer: the parameter is its address.
    Buffer {
        /// Element type.
        elem: Elem,
        /// Length in elements.
        len: usize,
        /// Initial contents.
        init: Init,
        /// This buffer's ulp bound, overriding the case's.
        ulp: Option<u64>,
        /// This buffer's absolute bound, overriding the case's.
        atol: Option<f64>,
    },
    /// A scalar's little-endian bytes (its type's width) and whether it
    /// sign-extends.
    Scalar { bytes: Vec<u8>, signed: bool },
}

/// A kernel with its launch.
#[derive(Clone, Debug)]
pub struct Case {
    /// `<source>/<name>`.
    pub name: String,
    /// TileIR bytecode.
    pub bytecode: Vec<u8>,
    /// The entry to launch (the module's only one when absent).
    pub entry: Option<String>,
    /// Tile blocks in x, y, z.
    pub grid: [u32; 3],
    /// One per entry parameter.
    pub args: Vec<Arg>,
    /// Ulps by which float elements may differ (0: bitwise).
    pub ulp: u64,
    /// An absolute difference float elements may also have, on top of
    /// `ulp` ulps of the larger (for results that cancel).
    pub atol: f64,
    /// Whether our PTX also runs compiled with swizzled operand buffers
    /// (`TILEIR_ALWAYS_SWIZZLE`).
    pub swizzled_too: bool,
    /// Free text shown with a mismatch.
    pub note: String,
}

impl Case {
    /// Parses a case description.
    pub fn from_json(name: String, bytecode: Vec<u8>, j: &Value) -> Result<Case, String> {
        let grid = j["grid"]
            .as_array()
            .filter(|g| g.len() == 3)
            .ok_or("grid: want [gx, gy, gz]")?;
        let grid = [0, 1, 2].map(|k| grid[k].as_u64().unwrap_or(0) as u32);
        if grid.contains(&0) {
            return Err("grid: want positive integers".into());
        }
        let mut args = Vec::new();
        for (k, a) in j["args"]
            .as_array()
            .ok_or("args: want a list")?
            .iter()
            .enumerate()
        {
            let err = |e: String| format!("args[{k}]: {e}");
            if let Some(b) = a.get("buffer") {
                let elem = Elem::parse(b["elem"].as_str().unwrap_or("")).map_err(err)?;
                let len = b["len"].as_u64().ok_or_else(|| err("len".into()))? as usize;
                let init = Init::parse(b["init"].as_str().unwrap_or("random")).map_err(err)?;
                let ulp = b.get("ulp").and_then(Value::as_u64);
                let atol = b.get("atol").and_then(Value::as_f64);
                args.push(Arg::Buffer {
                    elem,
                    len,
                    init,
                    ulp,
                    atol,
                });
            } else if let Some(s) = a.get("scalar") {
                let ty = Elem::parse(s["ty"].as_str().unwrap_or("")).map_err(err)?;
                let v = &s["value"];
                let mut bytes = Vec::new();
                match (v.as_i64(), v.as_u64(), v.as_f64()) {
                    (Some(i), _, _) => ty.encode_int(i, &mut bytes),
                    (None, Some(u), _) => ty.encode_int(u as i64, &mut bytes),
                    (None, None, Some(f)) => ty.encode(f, &mut bytes),
                    _ => return Err(err("value: want a number".into())),
                }
                args.push(Arg::Scalar {
                    bytes,
                    signed: ty.signed(),
                });
            } else {
                return Err(err("want {\"buffer\": ...} or {\"scalar\": ...}".into()));
            }
        }
        Ok(Case {
            name,
            bytecode,
            entry: j.get("entry").and_then(Value::as_str).map(String::from),
            grid,
            args,
            ulp: j.get("ulp").and_then(Value::as_u64).unwrap_or(0),
            atol: j.get("atol").and_then(Value::as_f64).unwrap_or(0.0),
            swizzled_too: j
                .get("swizzled_too")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            note: j.get("note").and_then(Value::as_str).unwrap_or("").into(),
        })
    }

    /// Every case `NAME.json` (with `NAME.tileir`) in `dir`, by name.
    pub fn load_dir(dir: &Path, source: &str) -> Vec<Case> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .filter_map(|e| {
                let p = e.ok()?.path();
                (p.extension()? == "json").then(|| p.file_stem()?.to_str().map(String::from))?
            })
            .collect();
        names.sort();
        names
            .into_iter()
            .map(|n| Case::load(dir, source, &n).unwrap_or_else(|e| panic!("{e}")))
            .collect()
    }

    /// The case `NAME.json` (with `NAME.tileir`, or the bytecode it names)
    /// in `dir`, named `<source>/<NAME>`.
    pub fn load(dir: &Path, source: &str, name: &str) -> Result<Case, String> {
        let j = dir.join(format!("{name}.json"));
        let text = std::fs::read_to_string(&j).map_err(|e| format!("{}: {e}", j.display()))?;
        let v: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", j.display()))?;
        let file = v
            .get("bytecode")
            .and_then(Value::as_str)
            .map_or(format!("{name}.tileir"), String::from);
        let b = dir.join(file);
        let bytes = std::fs::read(&b).map_err(|e| format!("{}: {e}", b.display()))?;
        Case::from_json(format!("{source}/{name}"), bytes, &v)
            .map_err(|e| format!("{}: {e}", j.display()))
    }

    /// The buffers' initial contents for `seed`: the parameters' buffers
    /// in order, then the arrays their `arrays:` tables list (tables
    /// zeroed: the runner writes the addresses).
    pub fn inputs(&self, seed: u64) -> Vec<Vec<u8>> {
        let mut rng = Rng::new(seed ^ fnv(self.name.as_bytes()));
        let mut out: Vec<Vec<u8>> = self
            .args
            .iter()
            .filter_map(|a| match a {
                Arg::Buffer {
                    elem, len, init, ..
                } => Some(fill(&mut rng, *elem, *len, init)),
                Arg::Scalar { .. } => None,
            })
            .collect();
        for (elem, len, _) in self.listed_arrays() {
            out.push(fill(&mut rng, elem, len, &Init::Random));
        }
        out
    }

    /// The buffers listed by `arrays:` tables, in order: element type,
    /// length, and the index among the buffers of the table listing it.
    pub fn listed_arrays(&self) -> Vec<(Elem, usize, usize)> {
        let mut out = Vec::new();
        let bufs = self.args.iter().filter_map(|a| match a {
            Arg::Buffer { init, .. } => Some(init),
            Arg::Scalar { .. } => None,
        });
        for (k, init) in bufs.enumerate() {
            if let Init::Arrays { elem, count, len } = init {
                out.extend((0..*count).map(|_| (*elem, *len, k)));
            }
        }
        out
    }
}

/// FNV-1a.
pub fn fnv(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325, |h, x| {
        (h ^ *x as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// Deterministic xorshift generator.
pub struct Rng(u64);
impl Rng {
    /// A generator for `seed` (any value).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// A number in `[0, n)`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random float of `e`/`m` bits: mostly moderate magnitudes (about
/// 2^-6 to 2^6), some zeros, subnormals and huge values, and (unless
/// `finite`) NaN and infinities.
fn random_float(rng: &mut Rng, elem: Elem, finite: bool, normal: Option<i64>) -> u64 {
    let (e, m) = elem.float().unwrap();
    let sign = (rng.next() & 1) << (e + m);
    let emax = (1u64 << e) - 1;
    let bias = (1u64 << (e - 1)) - 1;
    let man = rng.next() & ((1u64 << m) - 1);
    let r = match normal {
        // zeros, else moderate magnitudes
        Some(_) if rng.below(20) == 0 => 0,
        Some(_) => 10 + rng.below(30),
        None => rng.below(40),
    };
    let bits = match r {
        0 | 1 => 0,
        2 => man.max(1),
        3 => ((emax - 1) << m) | man,
        4 if !finite => emax << m,
        5 if !finite => (emax << m) | (1 << (m - 1)),
        6..=9 => ((bias + rng.below(3)) << m) | (man & !((1u64 << m.saturating_sub(3)) - 1)),
        _ => {
            // a binade within `span` of 1, below 2^(top+1)
            let span = bias.min(6) as i64;
            let top = normal.map_or(span, |e| e.clamp(-span, span));
            let off = rng.below((span + top + 1) as u64) as i64 - span;
            (((bias as i64 + off) as u64) << m) | man
        }
    };
    let b = sign | bits;
    // e4m3 has no infinities: its all-ones exponent holds normal values
    // but the all-ones pattern is NaN
    if elem == Elem::F8e4m3 && finite && elem.is_nan(b) {
        b & !1
    } else {
        b
    }
}

/// The special values of a float type, as bits: ±0, the smallest and
/// largest subnormals, the smallest normal, 0.5, 1, 1.5, 2, 2.5, 3, 10,
/// the largest finite value, ±inf (none in e4m3) and NaN of either sign.
pub fn special_values(elem: Elem) -> Vec<u64> {
    let Some((e, m)) = elem.float() else {
        return Vec::new();
    };
    let emax = (1u64 << e) - 1;
    let sign = 1u64 << (e + m);
    let mant = (1u64 << m) - 1;
    let enc = |v: f64| {
        let mut b = Vec::new();
        elem.encode(v, &mut b);
        elem.bits(&b)
    };
    let (largest, inf) = if elem == Elem::F8e4m3 {
        (0x7e, None)
    } else {
        (((emax - 1) << m) | mant, Some(emax << m))
    };
    let mut mags = vec![0, 1, mant, 1 << m];
    mags.extend([0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 10.0].map(enc));
    mags.push(largest);
    mags.extend(inf);
    let nan = if elem == Elem::F8e4m3 {
        0x7f
    } else {
        (emax << m) | (1 << (m - 1))
    };
    mags.push(nan);
    mags.iter().flat_map(|&b| [b, b | sign]).collect()
}

fn fill(rng: &mut Rng, elem: Elem, len: usize, init: &Init) -> Vec<u8> {
    let mut out = Vec::with_capacity(len * elem.size());
    let specials = special_values(elem);
    for i in 0..len {
        match init {
            Init::Pairs(inner) if !specials.is_empty() => {
                let n = specials.len();
                let k = if *inner { i % n } else { i / n % n };
                out.extend_from_slice(&specials[k].to_le_bytes()[..elem.size()]);
            }
            Init::Pairs(_) => elem.encode_int(0, &mut out),
            Init::Zeros => elem.encode_int(0, &mut out),
            Init::Iota => elem.encode_int(i as i64, &mut out),
            Init::Range(lo, hi) => {
                elem.encode_int(lo + rng.below((hi - lo) as u64) as i64, &mut out)
            }
            Init::NonZero(lo, hi) => loop {
                let v = lo + rng.below((hi - lo) as u64) as i64;
                if v != 0 {
                    break elem.encode_int(v, &mut out);
                }
            },
            Init::Arrays { .. } => elem.encode_int(0, &mut out),
            Init::Ints if elem.float().is_some() => {
                let v = match rng.below(16) {
                    0 => f64::NAN,
                    1 => f64::INFINITY,
                    2 => f64::NEG_INFINITY,
                    3 => -0.0,
                    _ => rng.below(17) as f64 - 8.0,
                };
                elem.encode(v, &mut out)
            }
            Init::Random | Init::Finite | Init::Normal(_) if elem.float().is_some() => {
                let normal = match init {
                    Init::Normal(e) => Some(*e),
                    _ => None,
                };
                let b = random_float(rng, elem, *init != Init::Random, normal);
                out.extend_from_slice(&b.to_le_bytes()[..elem.size()]);
            }
            Init::Ints => elem.encode_int(rng.below(17) as i64 - 8, &mut out),
            Init::Random | Init::Finite | Init::Normal(_) => {
                let v = match rng.below(4) {
                    0 => rng.next() as i64,
                    1 => (rng.next() as i64) >> 24,
                    _ => rng.below(201) as i64 - 100,
                };
                elem.encode_int(v, &mut out)
            }
        }
    }
    if *init == Init::Random {
        place_specials(rng, elem, &specials, &mut out);
    }
    out
}

/// Puts every special value of a float type at a position drawn from `rng`
/// (distinct positions; a seed-drawn run of them where the buffer is
/// shorter than the list), so that any seed reaches them all.
fn place_specials(rng: &mut Rng, elem: Elem, specials: &[u64], out: &mut [u8]) {
    let s = elem.size();
    let len = out.len() / s;
    if specials.is_empty() || len == 0 {
        return;
    }
    let mut pos: Vec<usize> = (0..len).collect();
    let n = specials.len().min(len);
    let first = rng.below(specials.len() as u64) as usize;
    for j in 0..n {
        let k = j + rng.below((len - j) as u64) as usize;
        pos.swap(j, k);
        let b = specials[(first + j) % specials.len()];
        out[pos[j] * s..(pos[j] + 1) * s].copy_from_slice(&b.to_le_bytes()[..s]);
    }
}

/// Ulp distance of two non-NaN floats (bits); +0 and -0 are zero apart.
fn ulp_distance(elem: Elem, a: u64, b: u64) -> u64 {
    let (e, m) = elem.float().unwrap();
    let sign = 1u64 << (e + m);
    let key = |x: u64| -> i128 {
        if x & sign != 0 {
            -((x & !sign) as i128)
        } else {
            x as i128
        }
    };
    (key(a) - key(b)).unsigned_abs() as u64
}

/// One differing element.
#[derive(Clone, Debug)]
pub struct Diff {
    /// Element index in the buffer.
    pub index: usize,
    /// NVIDIA's and our element, value and bits.
    pub nvidia: String,
    pub ours: String,
}

/// An element's value for a report.
pub fn show(elem: Elem, bits: u64) -> String {
    let w = elem.size() * 2;
    match elem.float() {
        Some(_) => format!("{:e} ({bits:#0w$x})", elem.to_f64(bits), w = w + 2),
        None => format!("{} ({bits:#0w$x})", elem.to_f64(bits), w = w + 2),
    }
}

/// The distance from a float's magnitude to the next larger one (its ulp).
fn spacing(elem: Elem, bits: u64) -> f64 {
    let (e, m) = elem.float().unwrap();
    let mag = bits & ((1u64 << (e + m)) - 1);
    (elem.to_f64(mag + 1) - elem.to_f64(mag)).abs()
}

/// Compares one buffer: bitwise, any NaN equal to any NaN, or for floats
/// within `ulp` ulps, or apart by at most `atol` plus `ulp` ulps of the
/// larger magnitude (finite values). Returns the count of differing
/// elements (the first few into `diffs`) and the largest ulp distance of
/// differing non-NaN floats.
pub fn compare(
    elem: Elem,
    ulp: u64,
    atol: f64,
    nv: &[u8],
    ours: &[u8],
    diffs: &mut Vec<Diff>,
) -> (usize, u64) {
    let s = elem.size();
    let (mut n, mut worst) = (0, 0);
    for i in 0..nv.len() / s {
        let (a, b) = (elem.bits(&nv[i * s..]), elem.bits(&ours[i * s..]));
        if a == b {
            continue;
        }
        let ok = elem.float().is_some()
            && match (elem.is_nan(a), elem.is_nan(b)) {
                (true, true) => true,
                (false, false) => {
                    let (x, y) = (elem.to_f64(a), elem.to_f64(b));
                    let big = if x.abs() >= y.abs() { a } else { b };
                    ulp > 0 && ulp_distance(elem, a, b) <= ulp
                        || atol > 0.0
                            && x.is_finite()
                            && y.is_finite()
                            && (x - y).abs() <= atol + ulp as f64 * spacing(elem, big)
                }
                _ => false,
            };
        if !ok {
            n += 1;
            if elem.float().is_some() && !elem.is_nan(a) && !elem.is_nan(b) {
                worst = worst.max(ulp_distance(elem, a, b));
            }
            if diffs.len() < 4 {
                diffs.push(Diff {
                    index: i,
                    nvidia: show(elem, a),
                    ours: show(elem, b),
                });
            }
        }
    }
    (n, worst)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_float_encoding_rounds_to_nearest_even() {
        let enc = |e: Elem, v: f64| {
            let mut b = Vec::new();
            e.encode(v, &mut b);
            e.bits(&b)
        };
        assert_eq!(enc(Elem::F16, 1.0), 0x3c00);
        assert_eq!(enc(Elem::F16, -2.5), 0xc100);
        assert_eq!(enc(Elem::F16, 65520.0), 0x7c00);
        assert_eq!(enc(Elem::F16, 2f64.powi(-24)), 0x0001);
        assert_eq!(enc(Elem::F16, 1.0 + 2f64.powi(-11)), 0x3c00);
        assert_eq!(enc(Elem::Bf16, 3.0), 0x4040);
        assert_eq!(enc(Elem::F8e4m3, 448.0), 0x7e);
        assert_eq!(enc(Elem::F8e4m3, f64::NAN), 0x7f);
        for bits in 0..0x7c00u64 {
            assert_eq!(enc(Elem::F16, Elem::F16.to_f64(bits)), bits, "{bits:#x}");
        }
        for bits in 0..0x7fu64 {
            assert_eq!(
                enc(Elem::F8e4m3, Elem::F8e4m3.to_f64(bits)),
                bits,
                "{bits:#x}"
            );
        }
    }

    #[test]
    fn comparison_equates_nans_and_bounds_ulps() {
        let mut d = Vec::new();
        let f = |x: f32| x.to_bits().to_le_bytes().to_vec();
        let nan2 = f32::from_bits(0x7fc0_0001);
        assert_eq!(
            compare(Elem::F32, 0, 0.0, &f(f32::NAN), &f(nan2), &mut d).0,
            0
        );
        assert_eq!(compare(Elem::F32, 0, 0.0, &f(0.0), &f(-0.0), &mut d).0, 1);
        let next = f32::from_bits(1.0f32.to_bits() + 2);
        assert_eq!(compare(Elem::F32, 2, 0.0, &f(1.0), &f(next), &mut d).0, 0);
        assert_eq!(compare(Elem::F32, 1, 0.0, &f(1.0), &f(next), &mut d).0, 1);
        assert_eq!(
            compare(Elem::F32, 9, 0.0, &f(1.0), &f(f32::NAN), &mut d).0,
            1
        );
        assert_eq!(compare(Elem::I32, 9, 0.0, &f(1.0), &f(next), &mut d).0, 1);
        assert_eq!(d.len(), 4);
        // an absolute bound for results near zero, on top of the ulps
        let (a, b) = (f(1e-6), f(1.5e-6));
        assert_eq!(compare(Elem::F32, 1, 0.0, &a, &b, &mut d).0, 1);
        assert_eq!(compare(Elem::F32, 1, 1e-6, &a, &b, &mut d).0, 0);
        assert_eq!(compare(Elem::F32, 0, 1e-7, &a, &b, &mut d).0, 1);
        assert_eq!(
            compare(Elem::F32, 1, 1e3, &f(1.0), &f(f32::INFINITY), &mut d).0,
            1
        );
        assert_eq!(
            compare(Elem::F32, 0, 1e3, &f(1.0), &f(f32::NAN), &mut d).0,
            1
        );
    }
}
