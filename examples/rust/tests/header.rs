//! src/sys.rs against include/shexec.h: every declared function has the
//! header's parameter and return types, every constant the header's value.
//! Declarations written by hand drift silently otherwise: a wrong width or a
//! lost `const` compiles and links, and breaks only at run time.
//!
//! Runs where the crate sits in the project's tree (the header two levels
//! up); elsewhere there is no header to compare with.
use std::collections::HashMap;
use std::fs;
use std::path::Path;

fn read(rel: &str) -> Option<String> {
    fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).ok()
}

/// The Rust spelling of a C type as sys.rs writes it.
fn c_to_rust(ctype: &str, is_return: bool) -> String {
    let spaced = ctype.replace('*', " * ");
    let tokens: Vec<&str> = spaced.split_whitespace().collect();
    let first_star = tokens.iter().position(|t| *t == "*").unwrap_or(tokens.len());
    let mut pointee_const = tokens[..first_star].contains(&"const");
    let base: Vec<&str> = tokens[..first_star].iter().copied().filter(|t| *t != "const").collect();
    let base = match base.join(" ").as_str() {
        "char" => "c_char".to_string(),
        "int" => "c_int".to_string(),
        "unsigned" => "c_uint".to_string(),
        "void" if first_star == tokens.len() && is_return => String::new(),
        "void" => "c_void".to_string(),
        "size_t" => "usize".to_string(),
        "uint32_t" => "u32".to_string(),
        "int32_t" => "i32".to_string(),
        "uint64_t" => "u64".to_string(),
        "int64_t" => "i64".to_string(),
        // a function pointer passed by value: NULL is allowed
        "shexec_output_fn" => "Option<shexec_output_fn>".to_string(),
        other => other.to_string(),
    };
    let mut rust = base;
    for (i, tok) in tokens.iter().enumerate().skip(first_star) {
        if *tok != "*" {
            continue;
        }
        rust = format!("{}{}", if pointee_const { "*const " } else { "*mut " }, rust);
        // a const after this '*' qualifies the pointer: the next one's pointee
        pointee_const = tokens.get(i + 1) == Some(&"const");
    }
    rust
}

/// "TYPE NAME" of a C parameter: the type (the name dropped).
fn c_param_type(param: &str) -> String {
    let param = param.trim();
    let cut = param.rfind(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
    param[..cut].trim().to_string()
}

/// Collapse whitespace, and the spaces around '*' and '<'/'>'.
fn norm(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

struct Sig {
    params: Vec<String>,
    ret: String,
}

/// SHEXEC_API prototypes of the header, by name, in Rust spelling.
fn header_functions(h: &str) -> HashMap<String, Sig> {
    let mut out = HashMap::new();
    for piece in h.split("SHEXEC_API ").skip(1) {
        let decl = match piece.find(';') {
            Some(end) => norm(&piece[..end]),
            None => continue,
        };
        let open = match decl.find('(') {
            Some(i) => i,
            None => continue,
        };
        let head = &decl[..open];
        let name_at = head.rfind(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
        let name = head[name_at..].to_string();
        let ret = c_to_rust(&head[..name_at], true);
        let inner = &decl[open + 1..decl.rfind(')').unwrap()];
        let params = if inner.trim() == "void" {
            Vec::new()
        } else {
            inner.split(',').map(|p| c_to_rust(&c_param_type(p), false)).collect()
        };
        out.insert(name, Sig { params, ret });
    }
    out
}

/// `pub fn` items of sys.rs's extern block, by name.
fn rust_functions(src: &str) -> HashMap<String, Sig> {
    let block = &src[src.find("extern \"C\" {").expect("an extern block")..];
    let mut out = HashMap::new();
    for piece in block.split("pub fn ").skip(1) {
        let decl = norm(&piece[..piece.find(';').unwrap()]);
        let open = decl.find('(').unwrap();
        let close = decl.rfind(')').unwrap();
        let name = decl[..open].to_string();
        let params = decl[open + 1..close]
            .split(',')
            .filter(|p| !p.trim().is_empty())
            .map(|p| norm(p.split_once(':').expect("name: type").1))
            .collect();
        let ret = decl[close + 1..].trim().trim_start_matches("->").trim().to_string();
        out.insert(name, Sig { params, ret });
    }
    out
}

/// SHEXEC_* integer constants of the header: enum entries and #defines.
fn header_constants(h: &str) -> HashMap<String, i64> {
    let mut out = HashMap::new();
    for line in h.lines() {
        let line = line.trim().trim_end_matches(',');
        let (name, value) = if let Some(rest) = line.strip_prefix("#define ") {
            match rest.split_once(' ') {
                Some((n, v)) => (n, v.trim()),
                None => continue,
            }
        } else if let Some((n, v)) = line.split_once(" = ") {
            (n, v.split([',', ' ']).next().unwrap_or(""))
        } else {
            continue;
        };
        if !name.starts_with("SHEXEC_") {
            continue;
        }
        let value = value.trim_end_matches('u');
        let parsed = match value.strip_prefix("0x") {
            Some(hex) => i64::from_str_radix(hex, 16),
            None => value.parse::<i64>(),
        };
        if let Ok(v) = parsed {
            out.insert(name.trim().to_string(), v);
        }
    }
    out
}

#[test]
fn sys_matches_the_header() {
    let (header, sys) = match (read("../../include/shexec.h"), read("src/sys.rs")) {
        (Some(h), Some(s)) => (h, s),
        _ => {
            eprintln!("include/shexec.h not found beside the crate: nothing to compare");
            return;
        }
    };
    let c = header_functions(&header);
    let rust = rust_functions(&sys);
    assert!(rust.len() >= 60, "only {} functions parsed from sys.rs", rust.len());
    for (name, r) in &rust {
        let h = c.get(name).unwrap_or_else(|| panic!("{} is not in the header", name));
        assert_eq!(r.params, h.params, "parameters of {}", name);
        assert_eq!(r.ret, h.ret, "return type of {}", name);
    }

    let values = header_constants(&header);
    let mut checked = 0;
    for line in sys.lines() {
        let rest = match line.trim().strip_prefix("pub const ") {
            Some(r) => r,
            None => continue,
        };
        let (name, rest) = rest.split_once(':').unwrap();
        let value: i64 = rest.split_once('=').unwrap().1.trim().trim_end_matches(';').parse().unwrap();
        assert_eq!(values.get(name), Some(&value), "value of {}", name);
        checked += 1;
    }
    assert!(checked >= 40, "only {} constants checked", checked);

    // the callback type, parameter by parameter
    let typedef = header
        .lines()
        .find(|l| l.contains("(*shexec_output_fn)"))
        .expect("the output callback typedef");
    let inner = &typedef[typedef.rfind('(').unwrap() + 1..typedef.rfind(')').unwrap()];
    let c_params: Vec<String> = inner.split(',').map(|p| c_to_rust(&c_param_type(p), false)).collect();
    let alias = &sys[sys.find("pub type shexec_output_fn").unwrap()..];
    let alias = norm(&alias[..alias.find(';').unwrap()]);
    let r_inner = &alias[alias.find("fn(").unwrap() + 3..alias.rfind(')').unwrap()];
    let r_params: Vec<String> = r_inner.split(',').map(|p| norm(p.split_once(':').unwrap().1)).collect();
    assert_eq!(r_params, c_params);
    assert!(typedef.trim_start().starts_with("typedef void"));
}

#[test]
fn the_type_mapping_itself() {
    assert_eq!(c_to_rust("const char *const *", false), "*const *const c_char");
    assert_eq!(c_to_rust("shexec_session **", false), "*mut *mut shexec_session");
    assert_eq!(c_to_rust("const char **", false), "*mut *const c_char");
    assert_eq!(c_to_rust("const shexec_run *", false), "*const shexec_run");
    assert_eq!(c_to_rust("void", true), "");
    assert_eq!(c_to_rust("const void *", false), "*const c_void");
    assert_eq!(c_param_type("const char *const *argv"), "const char *const *");
}
