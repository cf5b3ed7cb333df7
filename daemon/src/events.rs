//! The daemon's event log: a bounded, in-memory ring of [`Event`]s with sequence numbers,
//! read by clients with long polls (`next_events(cursor)`), since tarpc cannot push.
//!
//! Why a ring and not a channel per client: clients come and go (a CLI waiting for its run, an
//! editor session), and a client that was away must learn that it missed events (`missed`)
//! rather than silently skip them; the ring answers any cursor without per-client state.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

use skillwatch_protocol::{Event, EventBatch, EventKind, MAX_EVENT_WAIT_MS};
use tokio::sync::watch;

use crate::store::time::now_ms;

/// Events kept for late readers.
pub const CAPACITY: usize = 4096;

/// Most events one `next_events` answer carries.
pub const MAX_BATCH: usize = 512;

/// The log. Cheap to share behind an `Arc`.
#[derive(Debug)]
pub struct EventLog {
    instance: String,
    ring: Mutex<VecDeque<Event>>,
    /// The newest sequence number published (0 before the first event).
    latest: watch::Sender<u64>,
}

impl EventLog {
    /// An empty log for the daemon instance `instance`.
    pub fn new(instance: impl Into<String>) -> EventLog {
        EventLog {
            instance: instance.into(),
            ring: Mutex::new(VecDeque::with_capacity(256)),
            latest: watch::channel(0).0,
        }
    }

    /// The daemon instance id carried by every batch.
    pub fn instance(&self) -> &str {
        &self.instance
    }

    /// Append an event; returns its sequence number.
    pub fn publish(&self, kind: EventKind) -> u64 {
        let mut ring = self.ring.lock().unwrap_or_else(|e| e.into_inner());
        let seq = *self.latest.borrow() + 1;
        if ring.len() == CAPACITY {
            ring.pop_front();
        }
        ring.push_back(Event {
            seq,
            at_ms: now_ms(),
            kind,
        });
        self.latest.send_replace(seq);
        seq
    }

    /// Events after `cursor` now, without waiting.
    pub fn after(&self, cursor: u64) -> EventBatch {
        let ring = self.ring.lock().unwrap_or_else(|e| e.into_inner());
        let latest = *self.latest.borrow();
        // a cursor from another instance (or the future) starts over
        let cursor = if cursor > latest { 0 } else { cursor };
        let oldest = ring.front().map_or(latest + 1, |e| e.seq);
        let missed = cursor + 1 < oldest && latest > 0;
        let events: Vec<Event> = ring
            .iter()
            .filter(|e| e.seq > cursor)
            .take(MAX_BATCH)
            .cloned()
            .collect();
        let next = events
            .last()
            .map_or(cursor.max(oldest.saturating_sub(1)), |e| e.seq);
        EventBatch {
            instance: self.instance.clone(),
            events,
            next,
            missed,
        }
    }

    /// Events after `cursor`, waiting up to `wait_ms` (capped at [`MAX_EVENT_WAIT_MS`]) for
    /// the first one.
    pub async fn wait_after(&self, cursor: u64, wait_ms: u64) -> EventBatch {
        let mut latest = self.latest.subscribe();
        let wait = Duration::from_millis(wait_ms.min(MAX_EVENT_WAIT_MS));
        // nothing newer yet: wait (a cursor beyond the newest is stale and answered at once)
        if *latest.borrow_and_update() == cursor {
            let _ = tokio::time::timeout(wait, latest.wait_for(|seq| *seq > cursor)).await;
        }
        self.after(cursor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::sync::Arc;

    fn reloaded(n: usize) -> EventKind {
        EventKind::ConfigReloaded {
            path: PathBuf::from(format!("/c{n}")),
            error: None,
        }
    }

    #[test]
    fn a_cursor_reads_what_came_after_it() {
        let log = EventLog::new("i1");
        assert_eq!(log.after(0).events.len(), 0);
        assert_eq!(log.after(0).next, 0);
        log.publish(reloaded(1));
        log.publish(reloaded(2));
        let all = log.after(0);
        assert_eq!(
            all.events.iter().map(|e| e.seq).collect::<Vec<_>>(),
            vec![1, 2]
        );
        assert_eq!((all.next, all.missed), (2, false));
        let rest = log.after(1);
        assert_eq!(rest.events.len(), 1);
        assert!(log.after(2).events.is_empty());
        assert_eq!(log.after(2).next, 2);
    }

    #[test]
    fn a_reader_that_fell_behind_is_told() {
        let log = EventLog::new("i1");
        for n in 0..CAPACITY + 10 {
            log.publish(reloaded(n));
        }
        let batch = log.after(3);
        assert!(batch.missed);
        assert_eq!(batch.events.len(), MAX_BATCH);
        assert_eq!(batch.events[0].seq, 11);
        // a cursor from a previous daemon instance (beyond the newest) starts over
        let stale = log.after(1_000_000);
        assert!(stale.missed);
        assert_eq!(stale.events[0].seq, 11);
    }

    #[tokio::test]
    async fn a_long_poll_wakes_on_the_next_event() {
        let log = Arc::new(EventLog::new("i1"));
        let reader = {
            let log = log.clone();
            tokio::spawn(async move { log.wait_after(0, 10_000).await })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        log.publish(reloaded(1));
        let batch = tokio::time::timeout(Duration::from_secs(5), reader)
            .await
            .expect("woken before the wait ran out")
            .unwrap();
        assert_eq!(batch.events.len(), 1);
        // and a poll with nothing new returns after its wait
        let empty = log.wait_after(1, 20).await;
        assert!(empty.events.is_empty());
        assert_eq!(empty.next, 1);
    }
}
