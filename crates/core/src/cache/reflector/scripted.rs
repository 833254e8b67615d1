//! An in-process [`ListerWatcher`] that plays a script, for reflector tests
//! (after client-go's `testing/fake_controller_source.go`). Every call is recorded.
//! When the script runs out, calls never complete.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::cache::listwatch::{
    ListOptions, ListPage, ListerWatcher, SourceError, Watch, WatchEvent, WatchOptions,
};

pub enum Step {
    List(Result<ListPage, SourceError>),
    Watch(Result<Vec<Item>, SourceError>),
}

pub enum Item {
    Event(WatchEvent),
    Fail(SourceError),
    Sleep(Duration),
    /// Sleep until this long before the watch's deadline (its `timeoutSeconds` after it
    /// was opened), as a server's last bookmark comes.
    BeforeDeadline(Duration),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    List(ListOptions),
    Watch(WatchOptions),
    /// [`ListerWatcher::watch_stalled`].
    WatchStalled,
}

#[derive(Default)]
pub struct Scripted {
    steps: Mutex<VecDeque<Step>>,
    calls: Mutex<Vec<Call>>,
}

impl Scripted {
    pub fn new(steps: Vec<Step>) -> Arc<Scripted> {
        Arc::new(Scripted {
            steps: Mutex::new(steps.into()),
            calls: Mutex::default(),
        })
    }

    pub fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }

    fn next(&self, call: Call) -> Option<Step> {
        self.calls.lock().unwrap().push(call);
        self.steps.lock().unwrap().pop_front()
    }
}

impl ListerWatcher for Arc<Scripted> {
    async fn list(&self, opts: ListOptions) -> Result<ListPage, SourceError> {
        match self.next(Call::List(opts)) {
            Some(Step::List(r)) => r,
            Some(Step::Watch(_)) => panic!("script expected a watch, got a list"),
            None => std::future::pending().await,
        }
    }

    async fn watch(&self, opts: WatchOptions) -> Result<Watch, SourceError> {
        let deadline =
            tokio::time::Instant::now() + Duration::from_secs(opts.timeout_seconds.into());
        let items = match self.next(Call::Watch(opts)) {
            Some(Step::Watch(r)) => r?,
            Some(Step::List(_)) => panic!("script expected a list, got a watch"),
            None => std::future::pending().await,
        };
        let stream = futures::stream::unfold(VecDeque::from(items), move |mut q| async move {
            loop {
                match q.pop_front()? {
                    Item::Event(e) => return Some((Ok(e), q)),
                    Item::Fail(e) => return Some((Err(e), q)),
                    Item::Sleep(d) => tokio::time::sleep(d).await,
                    Item::BeforeDeadline(d) => tokio::time::sleep_until(deadline - d).await,
                }
            }
        });
        Ok(Watch::json(Box::pin(stream)))
    }

    fn watch_stalled(&self) {
        self.calls.lock().unwrap().push(Call::WatchStalled);
    }
}
