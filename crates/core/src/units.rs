//! Durations as records write them (docs/output-schema.md), for serde's `with`: whole
//! milliseconds ([`millis`]), milliseconds with microseconds ([`fractional_millis`]) and
//! whole seconds ([`secs`]). Imports nothing of the crate.

/// A duration as whole milliseconds (saturating).
pub mod millis {
    use std::time::Duration;

    use serde::{Deserialize, Serialize};

    pub fn serialize<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        u64::try_from(d.as_millis())
            .unwrap_or(u64::MAX)
            .serialize(s)
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_millis)
    }
}

/// A duration as milliseconds with three decimals (microseconds), e.g. `203.117`.
pub mod fractional_millis {
    use std::time::Duration;

    use serde::{Deserialize, Serialize};

    pub fn serialize<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        let micros = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        (micros as f64 / 1000.0).serialize(s)
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let ms = f64::deserialize(d)?;
        if !ms.is_finite() || ms < 0.0 {
            return Err(serde::de::Error::custom(format!("not a duration: {ms} ms")));
        }
        Ok(Duration::from_micros((ms * 1000.0).round() as u64))
    }
}

/// A duration as whole seconds.
pub mod secs {
    use std::time::Duration;

    use serde::{Deserialize, Serialize};

    pub fn serialize<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        d.as_secs().serialize(s)
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_secs)
    }
}
