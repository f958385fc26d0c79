//! Itanium demangling, for names users recognise.

/// Demangles a C++ symbol; other names come back unchanged. Only an
/// Itanium symbol (`_Z…`) is demangled: the demangler also reads bare
/// type codes, which would show a C function named `g` as `__float128`
/// and one named `i` as `int`.
pub fn demangle(symbol: &str) -> String {
    if !symbol.starts_with("_Z") {
        return symbol.to_string();
    }
    cpp_demangle::Symbol::new(symbol)
        .ok()
        .and_then(|s| s.demangle(&cpp_demangle::DemangleOptions::default()).ok())
        .unwrap_or_else(|| symbol.to_string())
}

/// The unqualified name without parameters or template arguments:
/// `ns::reduce<float>(float*, int)` gives `reduce`.
pub fn base_name(demangled: &str) -> String {
    let mut depth = 0i32;
    let mut end = demangled.len();
    let mut start = 0;
    let bytes = demangled.as_bytes();
    let mut template_start = None;
    for (i, &c) in bytes.iter().enumerate() {
        match c {
            b'<' => {
                if depth == 0 {
                    template_start = Some(i);
                }
                depth += 1;
            }
            b'>' => depth -= 1,
            b'(' if depth == 0 => {
                end = i;
                break;
            }
            b':' if depth == 0 && bytes.get(i + 1) == Some(&b':') => start = i + 2,
            _ => {}
        }
    }
    let stop = match template_start {
        Some(t) if t >= start && t < end => t,
        _ => end,
    };
    // Template functions demangle with their return type first.
    let name = demangled[start..stop].trim();
    name.rsplit(' ').next().unwrap_or(name).to_string()
}

/// The template a demangled function was instantiated from: the name with
/// every template argument list removed, so `void reduce<64, 1>(float*)`
/// and `void reduce<128, 2>(float*)` both give `void reduce(float*)`.
/// Operators keep their names whole (`operator<` is not a list).
pub fn template_of(demangled: &str) -> String {
    if demangled.contains("operator") {
        return demangled.to_string();
    }
    let mut depth = 0u32;
    let mut out = String::with_capacity(demangled.len());
    for c in demangled.chars() {
        match c {
            '<' => depth += 1,
            '>' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demangles_kernels() {
        assert_eq!(
            demangle("_Z7vec_addPKfS0_Pfi"),
            "vec_add(float const*, float const*, float*, int)"
        );
        assert_eq!(demangle("plain_c"), "plain_c");
        // One-letter C names are names, not the type codes they spell.
        for name in ["g", "i", "f", "d", "v", "e", "St", "Dn", "a"] {
            assert_eq!(demangle(name), name);
        }
    }

    #[test]
    fn instantiations_share_their_template() {
        let a = demangle("_Z6reduceILi64ELi1EEvPKfPfi");
        let b = demangle("_Z6reduceILi128ELi2EEvPKfPfi");
        assert_ne!(a, b);
        assert_eq!(template_of(&a), "void reduce(float const*, float*, int)");
        assert_eq!(template_of(&a), template_of(&b));
        // Overloads stay apart; nested lists go whole.
        assert_ne!(template_of("k(float*)"), template_of("k(int*)"));
        assert_eq!(template_of("void k<V<int, 2>>(V<int, 2>*)"), "void k(V*)");
        assert_eq!(template_of("S::operator<(S)"), "S::operator<(S)");
    }

    #[test]
    fn base_names() {
        assert_eq!(base_name("vec_add(float const*, int)"), "vec_add");
        assert_eq!(base_name("ns::reduce<float, 256>(float*, int)"), "reduce");
        assert_eq!(base_name("void ns::reduce<float>(float*)"), "reduce");
        assert_eq!(base_name("void scale<2>(float*)"), "scale");
        assert_eq!(base_name("plain"), "plain");
    }
}
