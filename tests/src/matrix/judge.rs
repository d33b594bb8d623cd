//! Every criterion of the story check judged on one case: (a) to (d) of
//! [`crate::matrix::criteria`], (e) of [`crate::matrix::defect_claim`], (f) of
//! [`crate::matrix::failover_told`].

use crate::matrix::criteria::{judge_first_four, Judgement, Subjects};
use crate::matrix::defect_claim::no_false_defect;
use crate::matrix::failover_told::failover_told;

/// Every criterion judged on `s`, in [`crate::matrix::criteria::Criterion::ALL`] order.
///
/// # Panics
///
/// If `s.apps` is empty (a case always has its drawn application).
pub fn judge(s: &Subjects) -> Vec<Judgement> {
    let mut all = judge_first_four(s);
    all.push(no_false_defect(s));
    all.push(failover_told(s));
    all
}
