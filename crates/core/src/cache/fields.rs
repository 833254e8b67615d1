//! Server-side apply's field sets, without I/O: a path into an object as
//! structured-merge-diff's `fieldpath` names it (`f:` fields, `k:{…}` items of associative
//! lists, `v:` items of sets, `i:` indexes), the FieldsV1 trie of `metadata.managedFields`
//! read into a set of paths and written back, the set of fields an object holds, and which
//! managedFields entry owns a path. The simulator keeps managedFields with it; `--blame`
//! reads them with it.
//!
//! Without the OpenAPI schema kube-apiserver has, which lists are associative (and by
//! which keys) and which maps are granular is known by field name ([`list_kind`],
//! [`GRANULAR_MAPS`]): the built-in types' `+listType`/`+listMapKey` markers for the fields
//! kubectl and controllers touch most.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

/// One step of a path (structured-merge-diff's `PathElement`), ordered as it sorts them:
/// fields, then keys, then values, then indexes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Element {
    /// A map key or struct field: `f:name`.
    Field(String),
    /// An item of an associative list by its merge keys: `k:{"name":"app"}`, the keys
    /// sorted, as compact JSON.
    Key(String),
    /// An item of a set (a list of scalars such as finalizers): `v:"x"`, as JSON.
    Value(String),
    /// An item by index: `i:0` (the server never writes it; read without failing).
    Index(usize),
}

pub type Path = Vec<Element>;
pub type Set = BTreeSet<Path>;

/// Maps whose keys are data (every key its own field, the map itself a member): labels,
/// annotations, a ConfigMap's data...
pub const GRANULAR_MAPS: &[&str] = &[
    "labels",
    "annotations",
    "data",
    "binaryData",
    "stringData",
    "matchLabels",
    "nodeSelector",
    "rollingUpdate",
];

/// How a list is merged and owned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListKind {
    /// `+listType=map` with these `+listMapKey`s.
    Map(&'static [&'static str]),
    /// `+listType=set`.
    Set,
    /// `+listType=atomic` (and every list not known): owned as a whole.
    Atomic,
}

/// The kind of the list under field `name`, given its items (ports are keyed by
/// `containerPort` in a pod and by `port` in a service; an item without its keys makes
/// the list atomic, as the server could not key it either).
pub fn list_kind(name: &str, items: &[Value]) -> ListKind {
    let keys: &'static [&'static str] = match name {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "volumes"
        | "env"
        | "imagePullSecrets" => &["name"],
        "volumeMounts" => &["mountPath"],
        "hostAliases" => &["ip"],
        "conditions" => &["type"],
        "ownerReferences" => &["uid"],
        "ports" if items.iter().any(|i| i.get("containerPort").is_some()) => {
            &["containerPort", "protocol"]
        }
        "ports" => &["port", "protocol"],
        "finalizers" => return ListKind::Set,
        _ => return ListKind::Atomic,
    };
    // protocol defaults to TCP; a missing one is keyed by the keys present.
    let keyed = items
        .iter()
        .all(|i| i.is_object() && keys[..1].iter().all(|k| i.get(*k).is_some()));
    if keyed {
        ListKind::Map(keys)
    } else {
        ListKind::Atomic
    }
}

/// Where an associative list lies in an object, its items unnamed: the fields on the way,
/// `None` for each list item passed.
type ListPlace = Vec<Option<String>>;

/// Which lists are associative and by which keys, as an object's managedFields name them:
/// every `k:{…}` node of an entry is an item of such a list, its JSON's members the list's
/// keys. The server wrote them from the type's schema, so this knows custom resources' lists
/// too, which [`list_kind`]'s table cannot.
#[derive(Debug, Default)]
pub struct ListKeys(BTreeMap<ListPlace, Vec<String>>);

impl ListKeys {
    /// The lists the FieldsV1 tries of these managedFields entries key.
    pub fn of_entries<'a>(entries: impl IntoIterator<Item = &'a Value>) -> ListKeys {
        let mut out = BTreeMap::new();
        // A trie read before adds nothing (the first reading of each list stays): an
        // update's old and new objects mostly hold the same entries.
        let mut read: Vec<&Value> = Vec::new();
        for e in entries {
            let trie = &e["fieldsV1"];
            if read.contains(&trie) {
                continue;
            }
            read.push(trie);
            for p in decode(trie) {
                for (i, el) in p.iter().enumerate() {
                    let Element::Key(k) = el else { continue };
                    let Ok(m) = serde_json::from_str::<Map<String, Value>>(k) else {
                        continue;
                    };
                    out.entry(place(&p[..i]))
                        .or_insert_with(|| m.keys().cloned().collect());
                }
            }
        }
        ListKeys(out)
    }

    /// The keys of the list at `path`, its field named `name`, holding `items`:
    /// managedFields' if they name them, else the built-in table's; `None` for a list not
    /// known to be associative.
    pub fn of_list(&self, path: &[Element], name: &str, items: &[Value]) -> Option<Vec<String>> {
        if let Some(k) = self.0.get(&place(path)) {
            return Some(k.clone());
        }
        match list_kind(name, items) {
            ListKind::Map(keys) => Some(keys.iter().map(|k| (*k).to_owned()).collect()),
            _ => None,
        }
    }
}

fn place(path: &[Element]) -> ListPlace {
    path.iter()
        .map(|e| match e {
            Element::Field(f) => Some(f.clone()),
            _ => None,
        })
        .collect()
}

/// The key element of an associative list's item: its merge keys present, sorted.
pub fn item_key<K: AsRef<str>>(item: &Value, keys: &[K]) -> Element {
    let mut m: BTreeMap<&str, &Value> = BTreeMap::new();
    for k in keys {
        let k = k.as_ref();
        if let Some(v) = item.get(k) {
            m.insert(k, v);
        }
    }
    Element::Key(serde_json::to_string(&m).unwrap_or_default())
}

/// The members of a FieldsV1 trie: each node written `{}` (a leaf) or holding `"."`.
pub fn decode(fields: &Value) -> Set {
    fn walk(v: &Value, path: &mut Path, out: &mut Set) {
        let Some(m) = v.as_object() else { return };
        if m.is_empty() && !path.is_empty() {
            out.insert(path.clone());
        }
        for (k, child) in m {
            if k == "." {
                if !path.is_empty() {
                    out.insert(path.clone());
                }
                continue;
            }
            let Some(e) = parse_element(k) else { continue };
            path.push(e);
            walk(child, path, out);
            path.pop();
        }
    }
    let mut out = Set::new();
    walk(fields, &mut Vec::new(), &mut out);
    out
}

/// One trie key as an element; `None` for a prefix structured-merge-diff does not write.
fn parse_element(k: &str) -> Option<Element> {
    let (prefix, rest) = k.split_at_checked(2)?;
    Some(match prefix {
        "f:" => Element::Field(rest.to_owned()),
        "k:" => {
            // Re-encoded with sorted keys, so equal keys compare equal.
            let v: BTreeMap<String, Value> = serde_json::from_str(rest).ok()?;
            Element::Key(serde_json::to_string(&v).ok()?)
        }
        "v:" => Element::Value(rest.to_owned()),
        "i:" => Element::Index(rest.parse().ok()?),
        _ => return None,
    })
}

fn element_key(e: &Element) -> String {
    match e {
        Element::Field(f) => format!("f:{f}"),
        Element::Key(k) => format!("k:{k}"),
        Element::Value(v) => format!("v:{v}"),
        Element::Index(i) => format!("i:{i}"),
    }
}

/// The FieldsV1 trie of a set: a member with children holds `"."` first, a member without
/// is `{}`.
pub fn encode(set: &Set) -> Value {
    #[derive(Default)]
    struct Node {
        member: bool,
        children: BTreeMap<Element, Node>,
    }
    fn write(n: &Node) -> Value {
        let mut m = Map::new();
        if n.member && !n.children.is_empty() {
            m.insert(".".into(), Value::Object(Map::new()));
        }
        for (e, c) in &n.children {
            m.insert(element_key(e), write(c));
        }
        Value::Object(m)
    }
    let mut root = Node::default();
    for p in set {
        let mut n = &mut root;
        for e in p {
            n = n.children.entry(e.clone()).or_default();
        }
        n.member = true;
    }
    write(&root)
}

/// The metadata fields whose ownership the server tracks (it strips name, uid,
/// resourceVersion, managedFields... before computing field sets).
const TRACKED_METADATA: &[&str] = &[
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "generateName",
];

/// The fields `v` holds, as structured-merge-diff's `ToFieldSet` lists them: leaves
/// (scalars, null, empty maps, atomic lists), items of associative lists and sets, and
/// granular maps. `status`: only the status (the `/status` subresource), else all but it.
/// `untyped`: a custom resource without a schema, whose every map is granular.
pub fn of_object(v: &Value, status: bool, untyped: bool) -> Set {
    let mut out = Set::new();
    let Some(top) = v.as_object() else {
        return out;
    };
    for (k, x) in top {
        let mut path = vec![Element::Field(k.clone())];
        match k.as_str() {
            "kind" | "apiVersion" => {}
            "status" if status => walk_value(x, k, &mut path, untyped, &mut out),
            _ if status => {}
            "status" => {}
            "metadata" => {
                for mk in TRACKED_METADATA {
                    if let Some(mv) = x.get(*mk) {
                        path.push(Element::Field((*mk).into()));
                        walk_value(mv, mk, &mut path, untyped, &mut out);
                        path.pop();
                    }
                }
            }
            _ => walk_value(x, k, &mut path, untyped, &mut out),
        }
    }
    out
}

fn walk_value(v: &Value, name: &str, path: &mut Path, untyped: bool, out: &mut Set) {
    match v {
        Value::Object(m) if !m.is_empty() && !is_atomic_map(name, v) => {
            let granular = untyped && !path.is_empty() || GRANULAR_MAPS.contains(&name);
            if granular {
                out.insert(path.clone());
            }
            for (k, x) in m {
                path.push(Element::Field(k.clone()));
                walk_value(x, k, path, untyped, out);
                path.pop();
            }
        }
        Value::Array(items) if !items.is_empty() => match list_kind(name, items) {
            ListKind::Atomic => {
                out.insert(path.clone());
            }
            ListKind::Set => {
                for i in items {
                    path.push(Element::Value(i.to_string()));
                    out.insert(path.clone());
                    path.pop();
                }
            }
            ListKind::Map(keys) => {
                if matches!(name, "ownerReferences" | "conditions") {
                    out.insert(path.clone());
                }
                for i in items {
                    path.push(item_key(i, keys));
                    out.insert(path.clone());
                    if let Some(m) = i.as_object() {
                        for (k, x) in m {
                            path.push(Element::Field(k.clone()));
                            walk_value(x, k, path, untyped, out);
                            path.pop();
                        }
                    }
                    path.pop();
                }
            }
        },
        _ => {
            out.insert(path.clone());
        }
    }
}

/// A label selector (`matchLabels`/`matchExpressions`) is `+structType=atomic`.
fn is_atomic_map(name: &str, v: &Value) -> bool {
    name == "selector" && (v.get("matchLabels").is_some() || v.get("matchExpressions").is_some())
}

/// Whether `p` is a leaf of `set`: no other member lies under it.
pub fn is_leaf(set: &Set, p: &Path) -> bool {
    set.range::<Path, _>((
        std::ops::Bound::Excluded(p.clone()),
        std::ops::Bound::Unbounded,
    ))
    .next()
    .is_none_or(|q| !q.starts_with(p))
}

/// The value at `p` in `v`, if there.
pub fn value_at<'a>(v: &'a Value, p: &[Element]) -> Option<&'a Value> {
    let mut cur = v;
    for e in p {
        cur = match e {
            Element::Field(f) => cur.get(f)?,
            Element::Index(i) => cur.get(i)?,
            Element::Value(s) => cur.as_array()?.iter().find(|x| x.to_string() == *s)?,
            Element::Key(k) => {
                let want: Map<String, Value> = serde_json::from_str(k).ok()?;
                cur.as_array()?
                    .iter()
                    .find(|x| want.iter().all(|(wk, wv)| x.get(wk) == Some(wv)))?
            }
        };
    }
    Some(cur)
}

/// `patch` merged into `target` as a strategic merge patch (and, simplified, a
/// server-side apply) merges: maps key by key, `null` deletes, items of associative lists
/// merged into the item with the same keys (new ones appended), sets united, other lists
/// replaced. A strategic merge patch's directives (`$patch`, `$retainKeys`,
/// `$setElementOrder/…`, `$deleteFromPrimitiveList/…`: `kubectl set image` sends
/// `$setElementOrder/containers`) are not read, and never become fields of the object.
pub fn merge(target: &mut Value, patch: &Value) {
    merge_named(target, patch, "");
}

/// Whether a patch's key is a strategic merge patch directive, not a field.
fn is_directive(key: &str) -> bool {
    matches!(key, "$patch" | "$retainKeys")
        || key.starts_with("$setElementOrder/")
        || key.starts_with("$deleteFromPrimitiveList/")
}

fn merge_named(target: &mut Value, patch: &Value, name: &str) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, pv) in p {
                if is_directive(k) {
                    continue;
                }
                if pv.is_null() {
                    t.shift_remove(k);
                } else if let Some(tv) = t.get_mut(k) {
                    merge_named(tv, pv, k);
                } else {
                    let mut v = Value::Null;
                    merge_named(&mut v, pv, k);
                    t.insert(k.clone(), v);
                }
            }
        }
        (Value::Array(t), Value::Array(p)) => match list_kind(name, p) {
            ListKind::Map(keys) if matches!(list_kind(name, t), ListKind::Map(_)) => {
                for item in p {
                    let key = item_key(item, keys);
                    match t.iter_mut().find(|x| item_key(x, keys) == key) {
                        Some(x) => merge_named(x, item, ""),
                        None => t.push(item.clone()),
                    }
                }
            }
            ListKind::Set => {
                for item in p {
                    if !t.contains(item) {
                        t.push(item.clone());
                    }
                }
            }
            _ => *t = p.clone(),
        },
        (t, Value::Object(p)) => {
            // A map over a scalar or nothing: the map, without its nulls.
            *t = Value::Object(Map::new());
            merge_named(t, &Value::Object(p.clone()), name);
        }
        (t, p) => *t = p.clone(),
    }
}

/// The path in the one style `--diff` and `--blame` write, jq-like: `.spec.replicas`,
/// `.metadata.annotations["deployment.kubernetes.io/revision"]` (a field that is not an
/// identifier quoted), `.status.conditions[type=Available].status` (an associative list's
/// item by its keys), `.status.containerStatuses[0]` (any other list's by index).
pub fn display(p: &[Element]) -> String {
    let mut s = String::new();
    for e in p {
        match e {
            Element::Field(f) if is_identifier(f) => {
                s.push('.');
                s.push_str(f);
            }
            Element::Field(f) => {
                if s.is_empty() {
                    s.push('.');
                }
                s.push_str(&format!("[{}]", Value::String(f.clone())));
            }
            Element::Key(k) => {
                let m: Map<String, Value> = serde_json::from_str(k).unwrap_or_default();
                let kv: Vec<String> = m
                    .iter()
                    .map(|(k, v)| match v {
                        Value::String(v) if is_bare(v) => format!("{k}={v}"),
                        v => format!("{k}={v}"),
                    })
                    .collect();
                s.push_str(&format!("[{}]", kv.join(",")));
            }
            Element::Value(v) => s.push_str(&format!("[={v}]")),
            Element::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    if s.is_empty() {
        s.push('.');
    }
    s
}

/// A field jq names with a dot: `[A-Za-z_][A-Za-z0-9_]*`.
fn is_identifier(f: &str) -> bool {
    let mut c = f.chars();
    c.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && c.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A key's string value written without quotes: nothing that could read as the
/// brackets' own syntax (`,`, `=`, `]`, quotes, spaces).
fn is_bare(v: &str) -> bool {
    !v.is_empty()
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._/:@+~".contains(c))
}

/// The path as structured-merge-diff writes one in a conflict:
/// `.spec.template.spec.containers[name="app"].image`.
pub fn smd_string(p: &[Element]) -> String {
    let mut s = String::new();
    for e in p {
        match e {
            Element::Field(f) => {
                s.push('.');
                s.push_str(f);
            }
            Element::Key(k) => {
                let m: Map<String, Value> = serde_json::from_str(k).unwrap_or_default();
                let kv: Vec<String> = m.iter().map(|(k, v)| format!("{k}={v}")).collect();
                s.push_str(&format!("[{}]", kv.join(",")));
            }
            Element::Value(v) => s.push_str(&format!("[={v}]")),
            Element::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// The index of the `managedFields` entry that owns `p`: the one owning the deepest node
/// on the way to `p` (`p` itself, or the atomic leaf or item that contains it); among
/// equals the most recent (`time`, then the later entry). `None`: nobody owns it.
pub fn owner(entries: &[Value], p: &[Element]) -> Option<usize> {
    let mut best: Option<(usize, &str, usize)> = None;
    for (i, e) in entries.iter().enumerate() {
        let set = decode(&e["fieldsV1"]);
        let depth = (1..=p.len()).rev().find(|&n| set.contains(&p[..n]));
        let Some(depth) = depth else { continue };
        let time = e["time"].as_str().unwrap_or("");
        let better = match best {
            None => true,
            Some((d, t, _)) => depth > d || (depth == d && time >= t),
        };
        if better {
            best = Some((depth, time, i));
        }
    }
    best.map(|(_, _, i)| i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// kube-controller-manager's entry on a pod, from a pod list captured from a genuine
    /// kube-apiserver 1.32 (trimmed).
    fn pod_entry() -> Value {
        json!({"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:pod-template-hash":{}},
            "f:ownerReferences":{".":{},"k:{\"uid\":\"9d38cf7e\"}":{}}},
            "f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:image":{},"f:name":{},"f:resources":{}}},
            "f:dnsPolicy":{}}})
    }

    fn f(s: &str) -> Element {
        Element::Field(s.into())
    }

    #[test]
    fn decodes_and_encodes_a_real_trie() {
        let set = decode(&pod_entry());
        let image = vec![
            f("spec"),
            f("containers"),
            Element::Key(r#"{"name":"nginx"}"#.into()),
            f("image"),
        ];
        assert!(set.contains(&image));
        assert!(set.contains(&vec![f("metadata"), f("labels")]));
        assert!(!set.contains(&vec![f("spec")]));
        assert_eq!(display(&image), ".spec.containers[name=nginx].image");
        assert_eq!(
            smd_string(&image),
            r#".spec.containers[name="nginx"].image"#
        );
        assert_eq!(encode(&set), pod_entry());
        // `i:` and unknown prefixes do not crash.
        let odd = decode(&json!({"f:a":{"i:0":{}, "x:y":{}, "i:z":{}}, "f:b": 1}));
        assert!(odd.contains(&vec![f("a"), Element::Index(0)]));
    }

    #[test]
    fn an_objects_field_set_is_what_the_server_writes() {
        // 71-create-configmap: a create's entry covers what the object holds.
        let cm = json!({"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm7","namespace":"ref",
            "labels":{"app":"b"}},"data":{"k":"v7"}});
        assert_eq!(
            encode(&of_object(&cm, false, false)),
            json!({"f:data":{".":{},"f:k":{}},"f:metadata":{"f:labels":{".":{},"f:app":{}}}})
        );
        let pod = json!({"spec":{"containers":[{"name":"a","image":"x","ports":[{"containerPort":80,"protocol":"TCP"}]}],
            "selector":{"matchLabels":{"a":"b"}}, "args":["x"]},
            "metadata":{"finalizers":["f1"]}, "status":{"phase":"P"}});
        let set = of_object(&pod, false, false);
        assert_eq!(
            encode(&set),
            json!({"f:metadata":{"f:finalizers":{"v:\"f1\"":{}}},"f:spec":{"f:args":{},
                "f:containers":{"k:{\"name\":\"a\"}":{".":{},"f:image":{},"f:name":{},
                    "f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:protocol":{}}}}},
                "f:selector":{}}})
        );
        assert_eq!(
            encode(&of_object(&pod, true, false)),
            json!({"f:status":{"f:phase":{}}})
        );
    }

    #[test]
    fn one_jq_like_path_style() {
        let k = |s: &str| Element::Key(s.into());
        let cases = [
            (vec![f("spec"), f("replicas")], ".spec.replicas"),
            (
                vec![
                    f("metadata"),
                    f("annotations"),
                    f("deployment.kubernetes.io/revision"),
                ],
                r#".metadata.annotations["deployment.kubernetes.io/revision"]"#,
            ),
            (vec![f("a-b"), f("_c9")], r#".["a-b"]._c9"#),
            (
                vec![
                    f("status"),
                    f("conditions"),
                    k(r#"{"type":"Available"}"#),
                    f("status"),
                ],
                ".status.conditions[type=Available].status",
            ),
            (
                vec![f("ports"), k(r#"{"containerPort":80,"protocol":"TCP"}"#)],
                ".ports[containerPort=80,protocol=TCP]",
            ),
            (
                vec![f("env"), k(r#"{"name":"a b,c"}"#)],
                r#".env[name="a b,c"]"#,
            ),
            (
                vec![f("volumeMounts"), k(r#"{"mountPath":"/var/x"}"#)],
                ".volumeMounts[mountPath=/var/x]",
            ),
            (vec![f("args"), Element::Index(0)], ".args[0]"),
            (vec![], "."),
        ];
        for (p, want) in cases {
            assert_eq!(display(&p), want);
        }
    }

    #[test]
    fn managed_fields_name_the_keys_of_lists_custom_resources_too() {
        let entries = [
            json!({"fieldsV1":{"f:spec":{"f:routes":{"k:{\"host\":\"a\",\"port\":1}":{"f:to":{}}},
            "f:containers":{"k:{\"name\":\"c\"}":{"f:env":{"k:{\"name\":\"E\"}":{}}}}}}}),
        ];
        let keys = ListKeys::of_entries(&entries);
        let routes = [f("spec"), f("routes")];
        assert_eq!(
            keys.of_list(&routes, "routes", &[]),
            Some(vec!["host".to_owned(), "port".to_owned()])
        );
        // Under any item of the list above it.
        let env = [f("spec"), f("containers"), Element::Index(3), f("env")];
        assert_eq!(
            keys.of_list(&env, "env", &[]),
            Some(vec!["name".to_owned()])
        );
        // Not named there: the built-in table, else none.
        let none = ListKeys::default();
        let c = [f("status"), f("conditions")];
        assert_eq!(
            none.of_list(&c, "conditions", &[]),
            Some(vec!["type".to_owned()])
        );
        assert_eq!(none.of_list(&routes, "routes", &[]), None);
    }

    #[test]
    fn merges_lists_by_their_keys() {
        let mut d = json!({"spec":{"containers":[{"name":"a","image":"x","args":["1"]},{"name":"b","image":"y"}],
            "finalizers":["f"],"tolerations":[{"key":"k"}],"gone":1}});
        merge(
            &mut d,
            &json!({"spec":{"containers":[{"name":"b","image":"z"},{"name":"c","image":"w"}],
                "finalizers":["g"],"tolerations":[],"gone":null,"new":{"a":null,"b":1}}}),
        );
        assert_eq!(
            d,
            json!({"spec":{"containers":[{"name":"a","image":"x","args":["1"]},{"name":"b","image":"z"},{"name":"c","image":"w"}],
                "finalizers":["f","g"],"tolerations":[],"new":{"b":1}}})
        );
    }

    /// `kubectl set image`'s patch carries `$setElementOrder/containers`: a directive, not
    /// a field (the simulator stored it, and its protobuf could not encode the Deployment).
    #[test]
    fn strategic_merge_directives_are_not_fields() {
        let mut d = json!({"spec":{"containers":[{"name":"a","image":"x"}]}});
        merge(
            &mut d,
            &json!({"spec":{"$setElementOrder/containers":[{"name":"a"}],"$retainKeys":["containers"],
                "containers":[{"name":"a","image":"y"}]},"$patch":"merge"}),
        );
        assert_eq!(d, json!({"spec":{"containers":[{"name":"a","image":"y"}]}}));
    }

    #[test]
    fn the_owner_is_the_deepest_then_latest() {
        let entries = vec![
            json!({"manager":"create","time":"2026-01-01T00:00:00Z","fieldsV1":pod_entry()}),
            json!({"manager":"patch","time":"2026-01-01T00:00:01Z",
                "fieldsV1":{"f:spec":{"f:containers":{"k:{\"name\":\"nginx\"}":{"f:image":{}}}}}}),
        ];
        let nginx = Element::Key(r#"{"name":"nginx"}"#.into());
        let image = vec![f("spec"), f("containers"), nginx.clone(), f("image")];
        assert_eq!(owner(&entries, &image), Some(1));
        let name = vec![f("spec"), f("containers"), nginx, f("name")];
        assert_eq!(owner(&entries, &name), Some(0));
        assert_eq!(owner(&entries, &[f("spec"), f("nodeName")]), None);
        // Inside an atomic leaf: its owner.
        assert_eq!(
            owner(&entries, &[f("spec"), f("dnsPolicy"), f("x")]),
            Some(0)
        );
    }
}
