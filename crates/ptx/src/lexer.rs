//! Tokens of PTX (to be written).
