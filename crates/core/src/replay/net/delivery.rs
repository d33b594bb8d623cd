//! What a task awaits on the simulated network: a moment ([`Until`]), a reply on its way
//! ([`Delivery`]), another task's wake ([`Parked`]).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::Net;

/// Completes at a virtual time: at once when nothing else happens before it (the clock moves
/// there), else when the driver resumes the task then.
pub struct Until<'n, 'a> {
    pub(super) net: &'n Net<'a>,
    pub(super) at_us: u64,
    pub(super) queued: bool,
}

impl Future for Until<'_, '_> {
    type Output = ();

    #[inline]
    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        let net = self.net;
        let now = net.now.get();
        if self.at_us <= now {
            return Poll::Ready(());
        }
        if self.queued {
            // Resumed by another task's wake before this delivery: keep waiting.
            return Poll::Pending;
        }
        if net.arrives_now(self.at_us) {
            return Poll::Ready(());
        }
        self.queued = true;
        Poll::Pending
    }
}

/// A reply on its way: completes with it when it arrives.
pub struct Delivery<'n, 'a, T> {
    pub(super) until: Until<'n, 'a>,
    pub(super) value: Option<T>,
}

impl<T> Delivery<'_, '_, T> {
    /// When the reply arrives (virtual µs).
    pub(in crate::replay) fn arrives_us(&self) -> u64 {
        self.until.at_us
    }

    /// When the reply arrives and the reply, without waiting for it.
    pub(in crate::replay) fn into_parts(self) -> (u64, T) {
        let value = self
            .value
            .unwrap_or_else(|| unreachable!("taken only when delivered"));
        (self.until.at_us, value)
    }
}

impl<T: Unpin> Future for Delivery<'_, '_, T> {
    type Output = T;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        match Pin::new(&mut self.until).poll(cx) {
            Poll::Ready(()) => match self.value.take() {
                Some(v) => Poll::Ready(v),
                None => Poll::Pending,
            },
            Poll::Pending => Poll::Pending,
        }
    }
}

/// Completes once another task woke this one (see [`Net::parked`]).
pub struct Parked<'n, 'a> {
    pub(super) net: &'n Net<'a>,
    pub(super) first: bool,
}

impl Future for Parked<'_, '_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        if self.first && self.net.timed {
            self.first = false;
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    }
}
