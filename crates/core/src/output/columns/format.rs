//! How kubectl formats values, shared by the printers: apimachinery's label and selector
//! formats, and printers.go's small list helpers (`<none>`, `+ N more...`). Go's own
//! `fmt.Sprint` and `json.Marshal` of a value are [`crate::gofmt`]'s.

use std::cell::Cell;
use std::marker::PhantomData;
use std::time::Duration;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use crate::text::human_duration;

/// `field` of each element of the array `v`, comma-joined (a missing field is empty).
pub(super) fn join_field(v: &Value, field: &str) -> String {
    v.as_array()
        .into_iter()
        .flatten()
        .map(|x| x[field].as_str().unwrap_or_default())
        .collect::<Vec<_>>()
        .join(",")
}

/// A string field, empty when absent (Go's zero value, as kubectl prints it).
pub(super) fn str_or_empty(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_owned()
}

/// apimachinery's `LabelSelectorAsSelector(s).String()`: requirements sorted by key,
/// `k=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`; empty for no selector.
pub(super) fn label_selector(s: &Value) -> String {
    let mut reqs: Vec<(String, String)> = Vec::new();
    if let Some(m) = s["matchLabels"].as_object() {
        for (k, v) in m {
            reqs.push((k.clone(), format!("{k}={}", v.as_str().unwrap_or_default())));
        }
    }
    for e in s["matchExpressions"].as_array().into_iter().flatten() {
        let k = e["key"].as_str().unwrap_or_default();
        let mut vals: Vec<&str> = e["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        vals.sort_unstable();
        vals.dedup();
        let r = match e["operator"].as_str().unwrap_or_default() {
            "In" => format!("{k} in ({})", vals.join(",")),
            "NotIn" => format!("{k} notin ({})", vals.join(",")),
            "Exists" => k.to_owned(),
            "DoesNotExist" => format!("!{k}"),
            _ => return "<error>".into(),
        };
        reqs.push((k.to_owned(), r));
    }
    reqs.sort_by(|a, b| a.0.cmp(&b.0));
    reqs.into_iter()
        .map(|(_, r)| r)
        .collect::<Vec<_>>()
        .join(",")
}

/// apimachinery's `FormatLabelSelector`: [`label_selector`], `<none>` when empty.
pub(super) fn format_selector(s: &Value) -> String {
    match label_selector(s) {
        l if l.is_empty() => "<none>".into(),
        l => l,
    }
}

/// printers.go `listWithMoreString`: the first three, `+ N more...`, `<unset>` for none.
pub(super) fn list_with_more(items: impl Iterator<Item = String>) -> String {
    const MAX: usize = 3;
    let mut list = Vec::new();
    let mut count = 0;
    for i in items {
        if list.len() < MAX {
            list.push(i);
        }
        count += 1;
    }
    let ret = list.join(",");
    if count > MAX {
        format!("{ret} + {} more...", count - MAX)
    } else if ret.is_empty() {
        "<unset>".into()
    } else {
        ret
    }
}

pub(super) fn none(v: &Value) -> String {
    match v {
        Value::String(s) if !s.is_empty() => s.clone(),
        Value::Null => "<none>".into(),
        Value::String(_) => "<none>".into(),
        other => other.to_string(),
    }
}

pub(super) fn int(v: &Value) -> String {
    v.as_i64().unwrap_or(0).to_string()
}

/// apimachinery's `labels.FormatLabels`: `k=v` pairs sorted by key, `<none>` when empty.
pub(super) fn map_pairs(v: &Value) -> String {
    match v.as_object() {
        Some(m) if !m.is_empty() => {
            let mut kv: Vec<(&String, &Value)> = m.iter().collect();
            kv.sort_by(|a, b| a.0.cmp(b.0));
            kv.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                .collect::<Vec<_>>()
                .join(",")
        }
        _ => "<none>".into(),
    }
}

/// A resource.Quantity as the object carries it (a string, or a bare JSON number).
pub(super) fn quantity(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => "0".into(),
    }
}

/// The first element of the array `list` whose `type` is `ty` (a condition, an address),
/// as kubectl's printers stop at the first; `None` when `list` is not an array.
pub(super) fn of_type<'a>(list: &'a Value, ty: &str) -> Option<&'a Value> {
    list.as_array()?.iter().find(|e| e["type"] == ty)
}

/// kubectl's age of a timestamp: `<unknown>` when absent or unparsable.
pub fn age(created: Option<&str>, now: jiff::Timestamp) -> String {
    let Some(t) = created.and_then(|c| c.parse::<jiff::Timestamp>().ok()) else {
        return "<unknown>".into();
    };
    since(now.as_second().saturating_sub(t.as_second()))
}

thread_local! {
    /// Set while a [`ServerPrinter`] prints a row: see [`since`].
    pub(super) static SERVER_AGES: Cell<bool> = const { Cell::new(false) };
}

/// A duration of `secs` seconds as apimachinery's `duration.HumanDuration` prints it.
/// A negative one is clock skew: kwatch's own columns print it as `0s`; in a server's
/// Table ([`ServerPrinter`]) it is `0s` down to a second and `<invalid>` beyond, as
/// `HumanDuration` prints it.
pub(super) fn since(secs: i64) -> String {
    if secs < -1 && SERVER_AGES.get() {
        return "<invalid>".into();
    }
    human_duration(Duration::from_secs(secs.max(0).unsigned_abs()))
}

/// `-L KEY`: the label's value, empty when absent.
pub(super) fn label_cell(labels: Option<&Labels<'_>>, key: &str) -> String {
    labels
        .and_then(|l| l.get(key))
        .unwrap_or_default()
        .to_owned()
}

/// `--show-labels`: `k=v` pairs in the object's order, `<none>` without labels.
pub(super) fn labels_cell(labels: Option<&Labels<'_>>) -> String {
    match labels {
        Some(l) if !l.0.is_empty() => {
            l.0.iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(",")
        }
        _ => "<none>".into(),
    }
}

/// String labels in the order a [`Value`] map keeps them: a repeated key keeps its first
/// place and takes its last value.
#[derive(Debug)]
pub(super) struct Labels<'a>(pub(super) Vec<(&'a str, &'a str)>);

impl<'a> Labels<'a> {
    /// The labels of a [`Value`]: a value that is not a string reads as empty, as
    /// `-L` and `--show-labels` print it.
    pub(super) fn from_value(v: &'a Value) -> Option<Labels<'a>> {
        v.as_object().map(|m| {
            Labels(
                m.iter()
                    .map(|(k, v)| (k.as_str(), v.as_str().unwrap_or_default()))
                    .collect(),
            )
        })
    }

    fn get(&self, key: &str) -> Option<&'a str> {
        self.0.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Labels<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Labels<'a>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object of strings")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Labels<'a>, A::Error> {
                let mut pairs: Vec<(&'a str, &'a str)> = Vec::new();
                while let Some((k, v)) = map.next_entry::<&'de str, &'de str>()? {
                    match pairs.iter_mut().find(|(pk, _)| *pk == k) {
                        Some(p) => p.1 = v,
                        None => pairs.push((k, v)),
                    }
                }
                Ok(Labels(pairs))
            }
        }
        d.deserialize_map(V(PhantomData))
    }
}
