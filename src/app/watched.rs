//! Whether each informer's watch ever worked. A run whose watch never once succeeded (the
//! verb watch forbidden while list is allowed) does not end in success: `kubectl get -w`
//! exits 1 with the server's error, and so does kwatch, after what it printed of the list.

use std::collections::BTreeMap;

use crate::cache::reflector::ReflectorEvent;
use crate::context::ContextName;
use crate::informer::record::{Body, Record};
use crate::informer::sink::Observer;

/// Per resource and context: the watch's refusal, until a sign that a watch worked.
#[derive(Debug, Default)]
pub struct Watched {
    informers: BTreeMap<(String, Option<ContextName>), State>,
}

#[derive(Debug, Default)]
struct State {
    /// The reflector said the list worked and the watch is forbidden.
    forbidden: bool,
    /// The refusal's words (the backoff's cause that followed it).
    cause: Option<String>,
    /// A watch delivered something: an event, a bookmark, a clean end.
    worked: bool,
}

impl Observer for Watched {
    fn record(&mut self, rec: &Record<'_>, _shown: bool, _targets: usize) {
        let key = (rec.resource.name.clone(), rec.context.cloned());
        let works = rec.body.shows_a_working_watch();
        let state = match &rec.body {
            Body::Event(ReflectorEvent::Protocol { problem, .. })
                if problem == "watch-forbidden" =>
            {
                let s = self.informers.entry(key).or_default();
                s.forbidden = true;
                return;
            }
            _ => self.informers.get_mut(&key),
        };
        let Some(s) = state else { return };
        match &rec.body {
            Body::Event(ReflectorEvent::Backoff { cause, .. }) if s.forbidden && !s.worked => {
                s.cause.get_or_insert_with(|| cause.clone());
            }
            _ if works => s.worked = true,
            _ => {}
        }
    }
}

impl Watched {
    /// The error of a run some of whose watches never once succeeded, in kubectl's words
    /// (`Error from server (Forbidden): …`), naming the resource (and context).
    pub fn never_watched(&self) -> Option<String> {
        let ((resource, context), s) = self
            .informers
            .iter()
            .find(|(_, s)| s.forbidden && !s.worked)?;
        let cause = s.cause.as_deref().unwrap_or("403 Forbidden");
        // The backoff's cause: `watch: 403 Forbidden: MESSAGE`.
        let words = match cause.split_once("403 Forbidden: ") {
            Some((_, message)) => format!("Error from server (Forbidden): {message}"),
            None => format!("error: {cause}"),
        };
        let whose = match context {
            Some(c) => format!("{resource} in context {c}"),
            None => resource.clone(),
        };
        Some(format!(
            "{words} (the watch of {whose} never succeeded: the list works, every watch is \
             refused)"
        ))
    }
}
