//! Bit-exact PTX floating-point semantics (to be written).
