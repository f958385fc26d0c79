//! The one glob form warpcheck reads (NOLINT lists, the configuration's
//! check lists and kernel names, `CompileFlags: Remove`): `*` matches any
//! run of characters, everything else itself. A leaf: it depends on
//! nothing, so every stage can match names without reaching up.

/// Whether glob `g` matches all of `name`.
pub fn glob(g: &str, name: &str) -> bool {
    match g.split_once('*') {
        None => g == name,
        Some((head, tail)) => {
            let Some(rest) = name.strip_prefix(head) else {
                return false;
            };
            (0..=rest.len()).any(|i| rest.is_char_boundary(i) && glob(tail, &rest[i..]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob("warpcheck-*", "warpcheck-bank-conflict"));
        assert!(glob("*conflict", "warpcheck-bank-conflict"));
        assert!(glob("*", "anything"));
        assert!(!glob("warpcheck-div*", "warpcheck-bank-conflict"));
        // No `*`: the whole name, not a prefix.
        assert!(!glob("warpcheck", "warpcheck-bank-conflict"));
    }
}
