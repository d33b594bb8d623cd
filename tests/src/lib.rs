//! Real-cluster harness for slotscope integration tests.
