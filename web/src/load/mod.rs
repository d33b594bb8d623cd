//! Loading a recording in the background: its bytes fetched or read ([`source`]), then read by
//! the reader module in its worker ([`reader`], started meanwhile), in steps whose progress the
//! status line shows, with the part read so far shown when a big recording takes long
//! ([`progress`]); the page answers throughout. Results go to the app through [`Sinks`].
//!
//! A recording served with its overview (`slotscope index`) is drawn from the overview first;
//! only then are the recording and the reader module fetched, so the first view costs the
//! viewer and the overview alone on the wire.

pub mod progress;
pub mod source;

use std::cell::Cell;
use std::rc::Rc;

use yew::Callback;

pub use progress::Status;
pub use source::Source;

use slotscope_core::overview::Overview;

use crate::dataset::{Dataset, Shared};
use crate::reader::{self, DeltaSource, Reader};
use crate::state::Action;
use progress::{preview_due, STEP_LINES};

thread_local! {
    /// Counts loads: a load still running when a newer one starts gives up.
    static GENERATION: Cell<u32> = const { Cell::new(0) };
}

/// Where a load reports to.
#[derive(Clone)]
pub struct Sinks {
    /// The reducer: [`Action::Preview`] and [`Action::Loaded`].
    pub dispatch: Callback<Action>,
    /// The parsed recording: a preview, then the whole.
    pub data: Callback<Option<Shared>>,
    /// The status line.
    pub status: Callback<Status>,
}

/// Marks a moment of the load on the page's performance timeline (`slotscope:NAME`), for the
/// viewer's benchmark to tell the load's phases apart.
fn mark(name: &str) {
    if let Some(p) = web_sys::window().and_then(|w| w.performance()) {
        let _ = p.mark(&format!("slotscope:{name}"));
    }
}

/// Longest wait for the tracks to be drawn before the recording is fetched anyway (a page
/// whose tracks are not laid out draws nothing).
const DRAW_WAIT_MS: u32 = 1_000;

/// Returns once the tracks were drawn again after `draws` (see [`crate::hook::draws`]), or after
/// [`DRAW_WAIT_MS`].
async fn drawn_since(draws: u32) {
    const STEP_MS: u32 = 10;
    for _ in 0..DRAW_WAIT_MS / STEP_MS {
        if crate::hook::draws() != draws {
            return;
        }
        gloo_timers::future::TimeoutFuture::new(STEP_MS).await;
    }
}

/// Loads `source` in the background: fetch or read, then parse in time slices. A later call
/// supersedes a load still running.
pub fn start(source: Source, sinks: Sinks) {
    let generation = GENERATION.with(|g| {
        g.set(g.get().wrapping_add(1));
        g.get()
    });
    let current = move || GENERATION.with(|g| g.get()) == generation;
    let (name, url) = (source.name(), source.url());
    sinks.status.emit(Status::started(&name));
    wasm_bindgen_futures::spawn_local(async move {
        let fail = |message: String| sinks.status.emit(Status::failed(&name, &message));
        // Hands a dataset to the app: the whole recording, or a preview of it (its overview or
        // the part read so far).
        let show = |d: Dataset, whole: bool| {
            let (name, source) = (name.clone(), url.clone());
            let (span, findings) = (d.span(), d.analysis.findings.len());
            sinks.data.emit(Some(Shared(Rc::new(d))));
            sinks.dispatch.emit(if whole {
                Action::Loaded {
                    name,
                    source,
                    span,
                    findings,
                }
            } else {
                Action::Preview {
                    name,
                    source,
                    span,
                    findings,
                }
            });
        };
        // The overview written beside the recording (`slotscope index`), shown while the
        // recording itself is read; a bad one, or one another build of slotscope wrote (its
        // findings may differ from this viewer's), is passed over: the recording says what it
        // holds.
        let mut overview_pairs = None;
        if let Some(json) = source.overview().await {
            if !current() {
                return;
            }
            if let Some(ov) = Overview::from_json(&json).ok().filter(Overview::is_current) {
                let pairs = ov.buckets_per_pair;
                overview_pairs = Some(pairs);
                let draws = crate::hook::draws();
                show(Dataset::from_overview(name.clone(), ov), false);
                sinks
                    .status
                    .emit(Status::reading_behind_overview(&name, 0.0, pairs));
                drawn_since(draws).await;
                if !current() {
                    return;
                }
            }
        }
        // The reader module comes (in its worker) while the recording does.
        mark("fetch");
        let worker = reader::prefetch();
        let bytes: Rc<[u8]> = match source.bytes().await {
            Ok(b) => b.into(),
            Err(e) => return fail(e),
        };
        if !current() {
            return;
        }
        mark("fetched");
        let reader = match Reader::open(worker, &bytes).await {
            Ok(r) => r,
            Err(e) => return fail(e),
        };
        if !current() {
            return;
        }
        mark("opened");
        let load_began = js_sys::Date::now();
        let mut previewed = overview_pairs.is_some();
        loop {
            let share = match reader.read(STEP_LINES).await {
                Ok(Some(p)) => p,
                Ok(None) => break,
                Err(e) => return fail(e),
            };
            if !current() {
                return;
            }
            // A big recording: show what is read so far while the rest loads.
            if preview_due(previewed, share, js_sys::Date::now() - load_began) {
                previewed = true;
                match reader.preview().await {
                    Ok(p) => show(
                        Dataset::read(name.clone(), p, bytes.clone(), DeltaSource::None),
                        false,
                    ),
                    Err(e) => return fail(e),
                }
                if !current() {
                    return;
                }
            }
            sinks.status.emit(match overview_pairs {
                Some(k) => Status::reading_behind_overview(&name, share, k),
                None => Status::reading(&name, share, previewed),
            });
        }
        mark("read");
        // The tracks and the analysis, a step at a time: a day-long recording takes a second.
        let mut share = 0.0;
        loop {
            sinks.status.emit(Status::analysing(&name, share));
            match reader.finish().await {
                Ok(Some(p)) => share = p,
                Ok(None) => break,
                Err(e) => return fail(e),
            }
            if !current() {
                return;
            }
        }
        mark("finished");
        let read = match reader.result().await {
            Ok(r) => r,
            Err(e) => return fail(e),
        };
        let d = Dataset::read(
            name.clone(),
            read,
            bytes,
            DeltaSource::Module(Rc::new(reader)),
        );
        sinks
            .status
            .emit(Status::loaded(&name, d.lines, d.analysis.findings.len()));
        show(d, true);
        mark("shown");
    });
}
