//! The tensor element types an identity may name (SPEC §2.1).

use crate::json::JsonStr;
use core::fmt;

macro_rules! dtypes {
    ($($variant:ident = $name:literal, $bits:literal;)*) => {
        /// A tensor element type. Names are case-sensitive.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Dtype {
            $(#[doc = concat!("`", $name, "`, ", stringify!($bits), " bits")] $variant,)*
        }

        impl Dtype {
            /// Every dtype, in SPEC order.
            pub const ALL: &'static [Dtype] = &[$(Dtype::$variant,)*];

            /// The name as written in an identity.
            pub const fn name(self) -> &'static str {
                match self { $(Dtype::$variant => $name,)* }
            }

            /// Bits per element.
            pub const fn bits(self) -> u32 {
                match self { $(Dtype::$variant => $bits,)* }
            }

            /// The dtype with exactly this name.
            pub fn from_name(name: &str) -> Option<Dtype> {
                Dtype::ALL.iter().copied().find(|dtype| dtype.name() == name)
            }
        }
    };
}

dtypes! {
    Float16 = "float16", 16;
    Bfloat16 = "bfloat16", 16;
    Float32 = "float32", 32;
    Float64 = "float64", 64;
    Int8 = "int8", 8;
    Int16 = "int16", 16;
    Int32 = "int32", 32;
    Int64 = "int64", 64;
    Uint8 = "uint8", 8;
    Fp8E4m3 = "fp8_e4m3", 8;
    Fp8E5m2 = "fp8_e5m2", 8;
    Nf4 = "nf4", 4;
}

impl Dtype {
    /// The dtype a JSON string value names (escapes allowed, e.g. `"float\u0031\u0036"`).
    pub fn from_json(value: &JsonStr<'_>) -> Option<Dtype> {
        Dtype::ALL.iter().copied().find(|dtype| value.eq_str(dtype.name()))
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_found_exactly_plain_or_escaped() {
        for &dtype in Dtype::ALL {
            let name = dtype.name();
            assert_eq!(Dtype::from_name(name), Some(dtype));
            assert_eq!(Dtype::from_json(&JsonStr::from_plain(name)), Some(dtype));
            // The first letter as an escape.
            let escaped = std::format!("\\u{:04x}{}", name.as_bytes()[0], &name[1..]);
            let escaped = JsonStr::from_raw(&escaped).unwrap();
            assert_eq!(Dtype::from_json(&escaped), Some(dtype), "{name}");
            let nears = [&name[1..], &name[..name.len() - 1], &std::format!("{name}x"), &name.to_uppercase()];
            // (`uint8` without its first letter is `int8`, another name.)
            for near in nears.into_iter().filter(|near| Dtype::ALL.iter().all(|d| d.name() != *near)) {
                assert_eq!(Dtype::from_name(near), None, "{near}");
                assert_eq!(Dtype::from_json(&JsonStr::from_plain(near)), None, "{near}");
            }
        }
        assert_eq!(Dtype::from_name(""), None);
    }
}
