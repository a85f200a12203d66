//! The `skip_serializing_if` predicates of the wire format: a field at its "nothing
//! set" value is left out of the JSON. Shared by `vocab`, `plan` and `result` so each
//! shape is written with the same test; the trade-off is a module of one-liners that
//! serde's attribute syntax (a path to a function) forces on us.

/// A `false` flag is left out.
pub fn is_false(v: &bool) -> bool {
    !*v
}

/// A zero count or length is left out.
pub fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// A zero 32-bit count is left out.
pub fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

/// A zero 16-bit value (an I/O priority hint) is left out.
pub fn is_zero_u16(v: &u16) -> bool {
    *v == 0
}

/// A zero signed gap is left out.
pub fn is_zero_i64(v: &i64) -> bool {
    *v == 0
}

/// A zero fraction is left out.
pub fn is_zero_f64(v: &f64) -> bool {
    *v == 0.0
}
