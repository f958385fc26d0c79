//! Device `printf` (`vprintf(format, args)`): clang packs the arguments
//! into a buffer, each aligned to its size, floats promoted to double.

use super::memory::{read_le, Fault, View};

/// Longest string read from device memory.
const MAX_STRING: usize = 4096;

/// Reads a NUL-terminated string as lane `lane` sees it.
pub fn read_string(view: &mut View, addr: u64, lane: usize) -> Result<String, Fault> {
    let mut out = Vec::new();
    for k in 0..MAX_STRING as u64 {
        let b = view.bytes(addr.wrapping_add(k), 1, lane, false)?[0];
        if b == 0 {
            break;
        }
        out.push(b);
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Reads packed arguments in order.
struct Args<'a, 'v> {
    view: &'a mut View<'v>,
    at: u64,
    lane: usize,
}

impl Args<'_, '_> {
    fn next(&mut self, bytes: u64) -> Result<u64, Fault> {
        self.at = self.at.div_ceil(bytes) * bytes;
        let v = read_le(self.view.bytes(self.at, bytes as usize, self.lane, false)?);
        self.at += bytes;
        Ok(v)
    }
}

/// One conversion's flags, width and precision, as written.
struct Spec {
    flags: String,
    width: Option<usize>,
    precision: Option<usize>,
    long: bool,
    conv: char,
}

/// Formats lane `lane`'s `printf`.
pub fn format(view: &mut View, fmt: u64, args: u64, lane: usize) -> Result<String, Fault> {
    let text = read_string(view, fmt, lane)?;
    let mut args = Args {
        view,
        at: args,
        lane,
    };
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = Spec {
            flags: String::new(),
            width: None,
            precision: None,
            long: false,
            conv: '%',
        };
        while let Some(&f) = chars.peek().filter(|f| "-+ #0".contains(**f)) {
            spec.flags.push(f);
            chars.next();
        }
        let number = |chars: &mut std::iter::Peekable<std::str::Chars>| {
            let mut n = String::new();
            while let Some(&d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                n.push(d);
                chars.next();
            }
            n.parse().ok()
        };
        spec.width = number(&mut chars);
        if chars.peek() == Some(&'.') {
            chars.next();
            spec.precision = Some(number(&mut chars).unwrap_or(0));
        }
        while let Some(&l) = chars.peek().filter(|l| "hlLqjzt".contains(**l)) {
            spec.long |= matches!(l, 'l' | 'L' | 'q' | 'j' | 'z' | 't');
            chars.next();
        }
        spec.conv = chars.next().unwrap_or('%');
        out.push_str(&convert(&spec, &mut args)?);
    }
    Ok(out)
}

fn convert(s: &Spec, args: &mut Args) -> Result<String, Fault> {
    let body = match s.conv {
        '%' => return Ok("%".into()),
        'd' | 'i' => {
            let v = if s.long {
                args.next(8)? as i64
            } else {
                i64::from(args.next(4)? as u32 as i32)
            };
            let sign = if v >= 0 && s.flags.contains('+') {
                "+"
            } else {
                ""
            };
            format!("{sign}{v}")
        }
        'u' | 'x' | 'X' | 'o' => {
            let v = if s.long {
                args.next(8)?
            } else {
                args.next(4)? & 0xffff_ffff
            };
            match s.conv {
                'u' => v.to_string(),
                'x' => format!("{v:x}"),
                'X' => format!("{v:X}"),
                _ => format!("{v:o}"),
            }
        }
        'c' => char::from(args.next(4)? as u8).to_string(),
        'p' => format!("{:#x}", args.next(8)?),
        's' => {
            let p = args.next(8)?;
            let text = read_string(args.view, p, args.lane)?;
            match s.precision {
                Some(n) => text.chars().take(n).collect(),
                None => text,
            }
        }
        'f' | 'F' | 'e' | 'E' | 'g' | 'G' | 'a' | 'A' => {
            let v = f64::from_bits(args.next(8)?);
            float(v, s.conv, s.precision.unwrap_or(6))
        }
        other => format!("%{other}"),
    };
    Ok(pad(body, s))
}

fn float(v: f64, conv: char, p: usize) -> String {
    match conv {
        'f' | 'F' => format!("{v:.p$}"),
        'e' | 'E' => {
            let t = c_exponent(&format!("{v:.p$e}"));
            if conv == 'E' {
                t.to_uppercase()
            } else {
                t
            }
        }
        _ => {
            // %g: the shorter of %e and %f with p significant digits.
            let p = p.max(1);
            let exp = if v == 0.0 {
                0
            } else {
                v.abs().log10().floor() as i64
            };
            let trim = |m: &str| {
                if m.contains('.') {
                    m.trim_end_matches('0').trim_end_matches('.').to_string()
                } else {
                    m.to_string()
                }
            };
            let t = if exp < -4 || exp >= p as i64 {
                let e = c_exponent(&format!("{:.*e}", p - 1, v));
                let (m, rest) = e.split_once('e').unwrap_or((&e, ""));
                format!("{}e{rest}", trim(m))
            } else {
                let decimals = (p as i64 - 1 - exp).max(0) as usize;
                trim(&format!("{v:.decimals$}"))
            };
            if conv == 'G' {
                t.to_uppercase()
            } else {
                t
            }
        }
    }
}

/// Rust writes `1.5e2`; C writes `1.5e+02`.
fn c_exponent(t: &str) -> String {
    match t.split_once('e') {
        Some((m, e)) => {
            let (sign, digits) = match e.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', e),
            };
            format!("{m}e{sign}{digits:0>2}")
        }
        None => t.to_string(),
    }
}

fn pad(body: String, s: &Spec) -> String {
    let Some(w) = s.width else { return body };
    let n = body.chars().count();
    if n >= w {
        return body;
    }
    let fill = w - n;
    if s.flags.contains('-') {
        format!("{body}{}", " ".repeat(fill))
    } else if s.flags.contains('0') && !matches!(s.conv, 's' | 'c') {
        let (sign, digits) = match body.strip_prefix('-') {
            Some(d) => ("-", d.to_string()),
            None => ("", body),
        };
        format!("{sign}{}{digits}", "0".repeat(fill))
    } else {
        format!("{}{body}", " ".repeat(fill))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Space;
    use crate::sim::addr;
    use crate::sim::layout::Layout;
    use crate::sim::memory::Buffer;

    #[test]
    fn formats_like_c() {
        let mut data = b"v=%d %5.2f %s|%-3u|%x %e\0hi\0".to_vec();
        let str_at = 25u64; // "hi"
                            // Arguments: int 42 at 0, double 1.23456 at 8, ptr at 16, uint 7 at
                            // 24, uint 255 at 28, double 1500.0 at 32.
        let mut args = vec![0u8; 40];
        args[0..4].copy_from_slice(&42i32.to_le_bytes());
        args[8..16].copy_from_slice(&1.23456f64.to_le_bytes());
        let hi = addr::encode(addr::GLOBAL, 1, str_at);
        args[16..24].copy_from_slice(&hi.to_le_bytes());
        args[24..28].copy_from_slice(&7u32.to_le_bytes());
        args[28..32].copy_from_slice(&255u32.to_le_bytes());
        args[32..40].copy_from_slice(&1500.0f64.to_le_bytes());
        data.resize(64, 0);
        let buf = |d: Vec<u8>| Buffer {
            name: "b".into(),
            space: Space::Global,
            data: d,
            writable: false,
            released: None,
            unwritten: None,
            lazy: None,
        };
        let mut objects = vec![buf(vec![]), buf(data), buf(args)];
        let layout = Layout::default();
        let (mut shared, mut local) = (Vec::new(), vec![Vec::new(); 32]);
        let mut view = View {
            objects: &mut objects,
            shared: &mut shared,
            local: &mut local,
            layout: &layout,
        };
        let out = format(
            &mut view,
            addr::encode(addr::GLOBAL, 1, 0),
            addr::encode(addr::GLOBAL, 2, 0),
            0,
        )
        .unwrap();
        assert_eq!(out, "v=42  1.23 hi|7  |ff 1.500000e+03");
        assert_eq!(float(0.0001, 'g', 6), "0.0001");
        assert_eq!(float(1e-5, 'g', 6), "1e-05");
        assert_eq!(float(123456789.0, 'g', 6), "1.23457e+08");
    }
}
