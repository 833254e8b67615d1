//! The port against kubectl: every case of `testdata/jsonpath/kubectl.json` (most from
//! client-go's util/jsonpath/jsonpath_test.go), each with what kubectl 1.32 printed, or the
//! error it gave, for the same object (`tools/capture_jsonpath_cases.py` took them).

use serde_json::{json, Value};

use super::*;

struct Capture {
    objects: Value,
    cases: Vec<Value>,
}

fn capture() -> Capture {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/jsonpath/kubectl.json");
    let doc: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    Capture {
        objects: doc["objects"].clone(),
        cases: doc["cases"].as_array().unwrap().clone(),
    }
}

/// kubectl's reason in its first stderr line: after `prefix`, up to `suffix` if given.
fn reason<'a>(stderr: &'a str, prefix: &str, suffix: &str) -> Option<&'a str> {
    let at = stderr.find(prefix)? + prefix.len();
    let rest = &stderr[at..];
    Some(match rest.find(suffix) {
        Some(end) if !suffix.is_empty() => &rest[..end],
        _ => rest,
    })
}

/// The words of an output whose order follows Go's map order (random): split at spaces
/// and braces, sorted.
fn words(s: &str) -> Vec<&str> {
    let mut w: Vec<&str> = s
        .split(|c: char| c.is_whitespace() || c == '{' || c == '}')
        .filter(|w| !w.is_empty())
        .collect();
    w.sort_unstable();
    w
}

/// What kwatch does with one case, in kubectl's terms: its stdout, or its error's reason.
fn jsonpath_case(template: &str, object: &Value) -> Result<String, String> {
    let t = Template::parse(template).map_err(|e| match e {
        Error::Parse { reason, .. } => format!("parse: {reason}"),
        Error::Always { reason, .. } => format!("exec: {reason}"),
        e => format!("other: {e}"),
    })?;
    t.render(object).map_err(|e| format!("exec: {}", e.reason))
}

#[test]
fn jsonpath_templates_print_what_kubectl_prints() {
    let cap = capture();
    let mut checked = 0;
    let mut failures = Vec::new();
    for case in cap.cases.iter().filter(|c| c["format"] == "jsonpath") {
        let template = case["template"].as_str().unwrap();
        let object = &cap.objects[case["object"].as_str().unwrap()];
        let stderr = case["stderr"].as_str().unwrap();
        let stdout = case["stdout"].as_str().unwrap();
        let got = jsonpath_case(template, object);
        let want: Result<String, String> = if case["exit"] == 0 {
            Ok(stdout.to_owned())
        } else if let Some(r) = reason(stderr, "Error executing template: ", ". Printing") {
            Err(format!("exec: {r}"))
        } else {
            // `error parsing jsonpath TEMPLATE, REASON` (the first line only: a template
            // with a newline leaves the reason on a later line).
            let r = reason(stderr, &format!("error parsing jsonpath {template}, "), "");
            Err(format!("parse: {}", r.unwrap_or("?")))
        };
        let same = match (&got, &want) {
            (Ok(g), Ok(w)) if case["sorted"] == true => words(g) == words(w),
            (Err(g), Err(w)) if w == "parse: ?" => g.starts_with("parse: "),
            (g, w) => g == w,
        };
        if !same {
            failures.push(format!(
                "{template:?}\n  kwatch  {got:?}\n  kubectl {want:?}"
            ));
        }
        checked += 1;
    }
    assert!(checked > 150, "{checked} cases");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn custom_columns_print_kubectls_cells() {
    let cap = capture();
    let mut checked = 0;
    for case in cap.cases.iter().filter(|c| c["format"] == "custom-columns") {
        let spec = case["template"].as_str().unwrap();
        let object = &cap.objects[case["object"].as_str().unwrap()];
        let stderr = case["stderr"].as_str().unwrap();
        let stdout = case["stdout"].as_str().unwrap();
        checked += 1;
        if stderr.contains("unexpected custom-columns spec") {
            // kubectl splits the spec at every comma; kwatch not inside brackets.
            assert!(spec.contains('['), "{spec}");
            assert!(parse_custom_columns(spec).is_ok(), "{spec}");
            continue;
        }
        let cols = match parse_custom_columns(spec) {
            Ok(cols) => cols,
            Err(e) => {
                assert!(
                    stderr.contains("unexpected path string"),
                    "{spec}: kwatch refused it ({e}), kubectl: {stderr}"
                );
                continue;
            }
        };
        assert!(
            !stderr.contains("unexpected path string"),
            "{spec}: kubectl refused it"
        );
        let got = crate::output::script::cell(&cols[0].template, object);
        match (case["exit"] == 0, got) {
            (true, Ok(cell)) => assert_eq!(format!("A\n{cell}\n"), stdout, "{spec}"),
            (false, Err(e)) => assert_eq!(format!("error: {}", e.reason), stderr, "{spec}"),
            (_, got) => panic!("{spec}: kwatch {got:?}, kubectl {stdout:?} {stderr:?}"),
        }
    }
    assert!(checked > 20, "{checked} cases");
}

/// An annotation's key with dots, as kubectl users write it: escaped dots after a dot, and
/// in single-quoted brackets (where an unescaped dot still splits the key, as in kubectl).
#[test]
fn escaped_dots_select_a_key_with_dots() {
    let d = json!({"metadata": {"annotations": {"deployment.kubernetes.io/revision": "1"}}});
    for t in [
        r"{.metadata.annotations.deployment\.kubernetes\.io/revision}",
        r"{.metadata.annotations['deployment\.kubernetes\.io/revision']}",
        r"{$.metadata.annotations['deployment\.kubernetes\.io/revision']}",
    ] {
        assert_eq!(Template::parse(t).unwrap().render(&d).unwrap(), "1", "{t}");
    }
    let t = "{.metadata.annotations['deployment.kubernetes.io/revision']}";
    assert_eq!(Template::parse(t).unwrap().render(&d).unwrap(), "");
    let cols =
        parse_custom_columns(r"REV:.metadata.annotations.deployment\.kubernetes\.io/revision")
            .unwrap();
    assert_eq!(cols[0].template.values(&d), [json!("1")]);
}

/// A template kubectl refuses is one line: kubectl's reason, no parser internals.
#[test]
fn a_refused_template_is_one_line_with_kubectls_reason() {
    for (t, reason) in [
        (
            r#"{.metadata.annotations["a.b"]}"#,
            r#"invalid array index "a.b""#,
        ),
        ("{.a[?(@.x==1)}", "unclosed array expect ]"),
        ("{.a[0", "unterminated array"),
        ("{.a", "unclosed action"),
        ("{.a[0]#}", "unrecognized character in action: U+0023 '#'"),
        ("{....a}", "invalid multiple recursive descent"),
        (r#"{"\q"}"#, r#"unquote string "\q" error invalid syntax"#),
        ("{.a[1:2:3:4]}", "invalid array index 1:2:3:4"),
    ] {
        let e = Template::parse(t).unwrap_err().to_string();
        assert_eq!(e, format!("error parsing jsonpath {t}: {reason}"));
        assert!(!e.contains('\n'), "{e}");
    }
    // A newline in the template is escaped in the message.
    let e = Template::parse("{.a\n}").unwrap_err().to_string();
    assert!(!e.contains('\n') && e.ends_with(": unclosed action"), "{e}");
    // Actions that fail on every object are refused up front, in kubectl's words.
    for (t, reason) in [
        ("{hello}", "unrecognized identifier hello"),
        ("{end}", "not in range, nothing to end"),
        (
            "{range .a[*]}{.b}{end}{end}",
            "not in range, nothing to end",
        ),
    ] {
        let e = Template::parse(t).unwrap_err().to_string();
        assert_eq!(e, format!("error in jsonpath {t}: {reason}"));
    }
}

#[test]
fn numbers_print_as_go_prints_an_int64_or_a_float64() {
    let v = json!({"i": 3, "f": 2.5, "m": 1_000_000.0, "s": 1e-7, "l": [1.0, 2]});
    let t = Template::parse("{.i} {.f} {.m} {.s} {.l}").unwrap();
    assert_eq!(t.render(&v).unwrap(), "3 2.5 1e+06 1e-07 [1,2]");
}

/// A template reads only the parts of an object its paths name ([`Template::reads`]):
/// every case renders the same from those parts as from the whole object (the same text,
/// or the same error), and the common templates do not read everything.
#[test]
fn templates_render_the_same_from_the_parts_they_read() {
    let cap = capture();
    let mut pruned = 0;
    let extra = [
        "{.metadata.name}{\"\\t\"}{.status.phase}{\"\\n\"}",
        "{range .spec.items[*]}{.metadata.name}{$.metadata.name}{end}",
        "{.metadata}",
        "{.metadata.name} {.metadata}",
        "{.metadata.labels.app\\.kubernetes\\.io/name}",
        "{.spec.items[?(@.kind==\"None\")].metadata.name}",
        "{.spec.nope.deeper}",
        "{.nope}",
        "{\"lit\"}{.kind}",
        "{range .spec.items[*]}[{.status.capacity.cpu}]{end}",
    ];
    let templates = cap
        .cases
        .iter()
        .filter(|c| c["format"] == "jsonpath")
        .filter_map(|c| c["template"].as_str().map(str::to_owned))
        .chain(extra.iter().map(|s| s.to_string()));
    let templates: Vec<String> = templates.collect();
    for template in &templates {
        let Ok(t) = Template::parse(template) else {
            continue;
        };
        let Some(reads) = t.reads() else { continue };
        for (name, object) in cap.objects.as_object().unwrap() {
            // As a server sends it, and with whitespace.
            for raw in [
                object.to_string(),
                serde_json::to_string_pretty(object).unwrap(),
            ] {
                let part = reads.value(&raw);
                let whole: Value = serde_json::from_str(&raw).unwrap();
                let got = t.render(&part).map_err(|e| e.reason);
                let want = t.render(&whole).map_err(|e| e.reason);
                assert_eq!(got, want, "{template} on {name}");
                if part != whole {
                    pruned += 1;
                }
            }
        }
    }
    assert!(pruned > 100, "{pruned} renders from parts");
    let reads = |t: &str| Template::parse(t).unwrap().reads();
    assert_eq!(reads("{.}"), None);
    assert_eq!(reads("{..name}"), None);
    assert_eq!(reads("{.*}"), None);
    assert_eq!(reads("{range}{end}"), None);
    let r = reads("{.metadata.name}{.status}").unwrap();
    let obj = r#"{"kind":"Pod","metadata":{"name":"a","managedFields":[{}],"uid":"u"},"spec":{},"status":{"phase":"Running"}}"#;
    assert_eq!(
        r.value(obj),
        json!({"metadata": {"name": "a"}, "status": {"phase": "Running"}})
    );
}
