//! Kernel arguments as the user writes them: `n=1024`, `x=2.5`,
//! `a=buf:4096:iota` (a buffer of 4096 bytes filled 0, 1, 2, ... in the
//! pointee type), `b=buf:4K:random:f32`.

use std::fmt;

/// An element type for filling and printing buffers.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Elem {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
}

impl Elem {
    pub fn parse(s: &str) -> Option<Elem> {
        Some(match s {
            "i8" => Elem::I8,
            "u8" => Elem::U8,
            "i16" => Elem::I16,
            "u16" => Elem::U16,
            "i32" => Elem::I32,
            "u32" => Elem::U32,
            "i64" => Elem::I64,
            "u64" => Elem::U64,
            "f32" => Elem::F32,
            "f64" => Elem::F64,
            _ => return None,
        })
    }

    pub fn bytes(self) -> usize {
        match self {
            Elem::I8 | Elem::U8 => 1,
            Elem::I16 | Elem::U16 => 2,
            Elem::I32 | Elem::U32 | Elem::F32 => 4,
            Elem::I64 | Elem::U64 | Elem::F64 => 8,
        }
    }

    /// The element type a C++ pointee names (`float const`, `unsigned int`,
    /// `float4`), from a demangled signature.
    pub fn from_cpp(pointee: &str) -> Option<Elem> {
        let words: Vec<&str> = pointee
            .split_whitespace()
            .filter(|w| !matches!(*w, "const" | "volatile" | "__restrict" | "__restrict__"))
            .collect();
        let name = words.join(" ");
        // CUDA vector types fill like their element type.
        let name = name.trim_end_matches(|c: char| c.is_ascii_digit());
        Some(match name {
            "float" => Elem::F32,
            "double" => Elem::F64,
            "char" | "signed char" => Elem::I8,
            "unsigned char" | "uchar" | "bool" => Elem::U8,
            "short" => Elem::I16,
            "unsigned short" | "ushort" => Elem::U16,
            "int" => Elem::I32,
            "unsigned int" | "unsigned" | "uint" => Elem::U32,
            "long" | "long long" | "longlong" => Elem::I64,
            "unsigned long" | "unsigned long long" | "ulong" | "ulonglong" => Elem::U64,
            _ => return None,
        })
    }

    /// Element `i` of an iota fill.
    fn iota(self, i: u64) -> u64 {
        match self {
            Elem::F32 => u64::from((i as f32).to_bits()),
            Elem::F64 => (i as f64).to_bits(),
            _ => i,
        }
    }

    /// A random element: floats uniform in [0, 1), integers any bits.
    fn random(self, bits: u64) -> u64 {
        match self {
            Elem::F32 => u64::from(((bits >> 40) as f32 / (1u64 << 24) as f32).to_bits()),
            Elem::F64 => ((bits >> 11) as f64 / (1u64 << 53) as f64).to_bits(),
            _ => bits,
        }
    }

    /// Reads one element as a JSON number.
    pub fn value(self, b: &[u8]) -> serde_json::Value {
        let mut w = [0u8; 8];
        w[..b.len()].copy_from_slice(b);
        let u = u64::from_le_bytes(w);
        let shift = 64 - 8 * self.bytes() as u32;
        let signed = ((u << shift) as i64) >> shift;
        match self {
            Elem::F32 => serde_json::json!(f32::from_bits(u as u32)),
            Elem::F64 => serde_json::json!(f64::from_bits(u)),
            Elem::I8 | Elem::I16 | Elem::I32 | Elem::I64 => serde_json::json!(signed),
            _ => serde_json::json!(u),
        }
    }
}

impl fmt::Display for Elem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Elem::I8 => "i8",
            Elem::U8 => "u8",
            Elem::I16 => "i16",
            Elem::U16 => "u16",
            Elem::I32 => "i32",
            Elem::U32 => "u32",
            Elem::I64 => "i64",
            Elem::U64 => "u64",
            Elem::F32 => "f32",
            Elem::F64 => "f64",
        };
        f.write_str(s)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Init {
    Zero,
    Iota,
    Random,
    /// Exact contents (for tests and tools driving the library).
    Bytes(Vec<u8>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct BufferSpec {
    pub bytes: u64,
    pub init: Init,
    /// Overrides the pointee type from the kernel's signature.
    pub elem: Option<Elem>,
}

/// One `--arg` value.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgValue {
    Int(i128),
    Float(f64),
    Buffer(BufferSpec),
}

/// `1024`, `4K`, `1M`, `0x100`.
fn parse_size(s: &str) -> Option<u64> {
    let (digits, scale) = match s.chars().last()? {
        'k' | 'K' => (&s[..s.len() - 1], 1 << 10),
        'm' | 'M' => (&s[..s.len() - 1], 1 << 20),
        'g' | 'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    let n = match digits.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok()?,
        None => digits.parse().ok()?,
    };
    n.checked_mul(scale)
}

impl ArgValue {
    pub fn parse(text: &str) -> Result<ArgValue, String> {
        if let Some(rest) = text.strip_prefix("buf:") {
            let mut parts = rest.split(':');
            let size = parts.next().unwrap_or_default();
            let bytes =
                parse_size(size).ok_or_else(|| format!("'{size}' is not a size in bytes"))?;
            let init = match parts.next() {
                None | Some("zero") => Init::Zero,
                Some("iota") => Init::Iota,
                Some("random") => Init::Random,
                Some(other) => {
                    return Err(format!("unknown fill '{other}' (zero, iota or random)"))
                }
            };
            let elem = parts
                .next()
                .map(|t| Elem::parse(t).ok_or_else(|| format!("unknown element type '{t}'")))
                .transpose()?;
            if parts.next().is_some() {
                return Err("expected buf:BYTES[:zero|iota|random[:TYPE]]".into());
            }
            return Ok(ArgValue::Buffer(BufferSpec { bytes, init, elem }));
        }
        let int = match text.strip_prefix('-') {
            Some(hex) if hex.starts_with("0x") => {
                i128::from_str_radix(&hex[2..], 16).ok().map(|v| -v)
            }
            _ if text.starts_with("0x") => i128::from_str_radix(&text[2..], 16).ok(),
            _ => text.parse::<i128>().ok(),
        };
        if let Some(v) = int {
            return Ok(ArgValue::Int(v));
        }
        text.parse::<f64>()
            .map(ArgValue::Float)
            .map_err(|_| format!("'{text}' is not a number or buf:BYTES[:init]"))
    }
}

/// Parses `name=value`.
pub fn parse_named(text: &str) -> Result<(String, ArgValue), String> {
    let (name, value) = text
        .split_once('=')
        .ok_or_else(|| format!("'{text}': expected NAME=VALUE"))?;
    Ok((name.trim().to_string(), ArgValue::parse(value.trim())?))
}

/// A deterministic generator (SplitMix64): the same seed gives the same
/// buffers on every machine.
pub struct SplitMix(u64);

impl SplitMix {
    pub fn new(seed: u64) -> Self {
        SplitMix(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// The initial bytes of a buffer.
pub fn fill(spec: &BufferSpec, elem: Option<Elem>, seed: u64) -> Result<Vec<u8>, String> {
    let mut data = super::memory::zeroed(spec.bytes)
        .ok_or_else(|| format!("cannot allocate a buffer of {} bytes", spec.bytes))?;
    let needs = |what: &str| {
        elem.ok_or_else(|| {
            format!("cannot tell the element type to fill with {what}; add it, as in buf:BYTES:{what}:f32")
        })
    };
    match &spec.init {
        Init::Zero => {}
        Init::Bytes(b) => {
            let n = b.len().min(data.len());
            data[..n].copy_from_slice(&b[..n]);
        }
        Init::Iota => {
            let e = needs("iota")?;
            for (i, chunk) in data.chunks_exact_mut(e.bytes()).enumerate() {
                super::memory::write_le(chunk, e.iota(i as u64));
            }
        }
        Init::Random => {
            let e = needs("random")?;
            let mut rng = SplitMix::new(seed);
            for chunk in data.chunks_exact_mut(e.bytes()) {
                super::memory::write_le(chunk, e.random(rng.next_u64()));
            }
        }
    }
    Ok(data)
}

/// The parameter types of a demangled signature, `f(float const*, int)`,
/// split at top-level commas.
pub fn signature_params(demangled: &str) -> Vec<String> {
    let Some(open) = demangled.find('(') else {
        return Vec::new();
    };
    let inner = &demangled[open + 1..demangled.rfind(')').unwrap_or(demangled.len())];
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(inner[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !inner.trim().is_empty() {
        out.push(inner[start..].trim().to_string());
    }
    out
}

/// The element type a pointer parameter of the signature points to.
pub fn pointee_elem(param: &str) -> Option<Elem> {
    Elem::from_cpp(param.trim().strip_suffix('*')?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_values() {
        assert_eq!(ArgValue::parse("-3").unwrap(), ArgValue::Int(-3));
        assert_eq!(ArgValue::parse("0x10").unwrap(), ArgValue::Int(16));
        assert_eq!(ArgValue::parse("2.5").unwrap(), ArgValue::Float(2.5));
        assert_eq!(
            ArgValue::parse("buf:4K:iota:f32").unwrap(),
            ArgValue::Buffer(BufferSpec {
                bytes: 4096,
                init: Init::Iota,
                elem: Some(Elem::F32)
            })
        );
        assert!(ArgValue::parse("buf:12:nonsense").is_err());
        assert!(ArgValue::parse("abc").is_err());
        assert_eq!(
            parse_named("n = 7").unwrap(),
            ("n".into(), ArgValue::Int(7))
        );
    }

    #[test]
    fn signature_types() {
        let p = signature_params("vector_add(float const*, float const*, float*, int)");
        assert_eq!(p, vec!["float const*", "float const*", "float*", "int"]);
        assert_eq!(pointee_elem(&p[0]), Some(Elem::F32));
        assert_eq!(pointee_elem(&p[3]), None);
        assert_eq!(pointee_elem("unsigned int*"), Some(Elem::U32));
        assert_eq!(pointee_elem("float4*"), Some(Elem::F32));
        assert_eq!(pointee_elem("S*"), None);
        assert_eq!(signature_params("k(std::pair<int, int>*, int)").len(), 2);
    }

    #[test]
    fn fills() {
        let spec = BufferSpec {
            bytes: 12,
            init: Init::Iota,
            elem: None,
        };
        let d = fill(&spec, Some(Elem::F32), 0).unwrap();
        assert_eq!(&d[4..8], &1.0f32.to_le_bytes());
        assert!(fill(&spec, None, 0).is_err());
        let r = BufferSpec {
            init: Init::Random,
            ..spec
        };
        let a = fill(&r, Some(Elem::F32), 7).unwrap();
        assert_eq!(a, fill(&r, Some(Elem::F32), 7).unwrap());
        assert_ne!(a, fill(&r, Some(Elem::F32), 8).unwrap());
        let v = f32::from_le_bytes(a[0..4].try_into().unwrap());
        assert!((0.0..1.0).contains(&v));
    }
}
