//! A serializable value (an event) as a flat list of tokens, for `lua::raw::push_tape` to build
//! the Lua value from in one protected call, without the `serde_json::Value` in between
//! (building that tree took a third of a small handler call: an allocation per key, string
//! and map node).
//!
//! The tape holds what `serde_json::to_value` would give, token by token: the same numbers
//! (integers that fit an `i64` stay integers; other numbers, and every float, are floats; a
//! float that is not finite is `null`), the same shapes for enums and options. Map keys must
//! be strings: anything else fails the tape, and the caller takes the JSON path, which knows
//! every case. The buffers are kept per thread and reused, so a tape in steady state
//! allocates nothing.

use std::cell::RefCell;
use std::fmt;

use serde::ser::{self, Serialize};

/// One token. A container's token gives how many items follow it (for an object: pairs of
/// a key token and a value); its items follow in order, each as a whole.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tok {
    Null,
    Bool(bool),
    Int(i64),
    Num(f64),
    /// `text[start .. start + len]`.
    Str(usize, usize),
    Arr(usize),
    Obj(usize),
}

/// A value as tokens, with the text of its strings in one buffer.
#[derive(Default)]
pub struct Tape {
    pub toks: Vec<Tok>,
    pub text: String,
}

impl Tape {
    /// The text of a [`Tok::Str`].
    pub fn str(&self, start: usize, len: usize) -> &[u8] {
        self.text_of(start, len).as_bytes()
    }

    /// The text of a [`Tok::Str`] as a string.
    pub fn text_of(&self, start: usize, len: usize) -> &str {
        self.text.get(start..start + len).unwrap_or("")
    }
}

thread_local! {
    static SPARE: RefCell<Tape> = RefCell::new(Tape::default());
}

/// Capacity kept between calls; a larger tape is dropped after use. Each extension's thread
/// keeps one, and `agent_end` carries the whole conversation: a larger bound let every
/// thread hold a copy's worth of a long session (20 extensions: 14 MiB after 1,000 prompts).
const KEEP_BYTES: usize = 64 << 10;

/// Runs `f` on the tape of `value`, or returns `None` when `value` has no tape (a map with a
/// key that is not a string, a failing `Serialize`).
pub fn with_tape<T: Serialize + ?Sized, R>(value: &T, f: impl FnOnce(&Tape) -> R) -> Option<R> {
    let mut tape = SPARE
        .try_with(|s| std::mem::take(&mut *s.borrow_mut()))
        .unwrap_or_default();
    tape.toks.clear();
    tape.text.clear();
    let out = value
        .serialize(Writer { tape: &mut tape })
        .ok()
        .map(|()| f(&tape));
    if tape.text.capacity() <= KEEP_BYTES && tape.toks.capacity() * 24 <= KEEP_BYTES {
        let _ = SPARE.try_with(|s| *s.borrow_mut() = tape);
    }
    out
}

/// Why a value has no tape (the caller then takes the JSON path).
#[derive(Debug)]
pub struct NoTape;

impl fmt::Display for NoTape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("no tape for this value")
    }
}

impl std::error::Error for NoTape {}

impl ser::Error for NoTape {
    fn custom<M: fmt::Display>(_: M) -> Self {
        NoTape
    }
}

/// Writes one value onto the tape.
struct Writer<'t> {
    tape: &'t mut Tape,
}

impl<'t> Writer<'t> {
    fn push(self, tok: Tok) -> Result<(), NoTape> {
        self.tape.toks.push(tok);
        Ok(())
    }

    fn string(self, s: &str) -> Result<(), NoTape> {
        let start = self.tape.text.len();
        self.tape.text.push_str(s);
        self.push(Tok::Str(start, s.len()))
    }

    /// Opens a container; its count is set when it closes.
    fn open(self, tok: Tok) -> Compound<'t> {
        let at = self.tape.toks.len();
        self.tape.toks.push(tok);
        Compound {
            tape: self.tape,
            at,
            items: 0,
        }
    }

    /// `{variant = <container>}`: the shape of a tuple or struct variant (the outer object
    /// is complete: one pair; the container closes as usual).
    fn variant(self, variant: &str, inner: Tok) -> Compound<'t> {
        self.tape.toks.push(Tok::Obj(1));
        let start = self.tape.text.len();
        self.tape.text.push_str(variant);
        self.tape.toks.push(Tok::Str(start, variant.len()));
        Writer { tape: self.tape }.open(inner)
    }
}

/// An open array or object.
struct Compound<'t> {
    tape: &'t mut Tape,
    /// Index of the container's token.
    at: usize,
    items: usize,
}

impl Compound<'_> {
    fn item<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), NoTape> {
        self.items += 1;
        value.serialize(Writer { tape: self.tape })
    }

    fn key(&mut self, key: &str) {
        let start = self.tape.text.len();
        self.tape.text.push_str(key);
        self.tape.toks.push(Tok::Str(start, key.len()));
    }

    fn close(self) -> Result<(), NoTape> {
        match self.tape.toks.get_mut(self.at) {
            Some(Tok::Arr(n) | Tok::Obj(n)) => *n = self.items,
            _ => return Err(NoTape),
        }
        Ok(())
    }
}

/// Integer methods whose every value fits an `i64`.
macro_rules! integers {
    ($($method:ident($ty:ty)),*) => {$(
        fn $method(self, v: $ty) -> Result<(), NoTape> {
            self.push(Tok::Int(v.into()))
        }
    )*};
}

impl<'t> ser::Serializer for Writer<'t> {
    type Ok = ();
    type Error = NoTape;
    type SerializeSeq = Compound<'t>;
    type SerializeTuple = Compound<'t>;
    type SerializeTupleStruct = Compound<'t>;
    type SerializeTupleVariant = Compound<'t>;
    type SerializeMap = Compound<'t>;
    type SerializeStruct = Compound<'t>;
    type SerializeStructVariant = Compound<'t>;

    fn serialize_bool(self, v: bool) -> Result<(), NoTape> {
        self.push(Tok::Bool(v))
    }
    integers!(
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32)
    );
    fn serialize_i64(self, v: i64) -> Result<(), NoTape> {
        self.push(Tok::Int(v))
    }
    fn serialize_u64(self, v: u64) -> Result<(), NoTape> {
        self.push(i64::try_from(v).map_or(Tok::Num(v as f64), Tok::Int))
    }
    fn serialize_f32(self, v: f32) -> Result<(), NoTape> {
        self.serialize_f64(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<(), NoTape> {
        self.push(if v.is_finite() {
            Tok::Num(v)
        } else {
            Tok::Null
        })
    }
    fn serialize_char(self, v: char) -> Result<(), NoTape> {
        self.string(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<(), NoTape> {
        self.string(v)
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), NoTape> {
        self.tape.toks.push(Tok::Arr(v.len()));
        self.tape
            .toks
            .extend(v.iter().map(|b| Tok::Int(i64::from(*b))));
        Ok(())
    }
    fn serialize_none(self) -> Result<(), NoTape> {
        self.push(Tok::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), NoTape> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), NoTape> {
        self.push(Tok::Null)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), NoTape> {
        self.push(Tok::Null)
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), NoTape> {
        self.string(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), NoTape> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), NoTape> {
        let mut c = self.open(Tok::Obj(0));
        c.key(variant);
        c.item(value)?;
        c.close()
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Compound<'t>, NoTape> {
        Ok(self.open(Tok::Arr(0)))
    }
    fn serialize_tuple(self, _: usize) -> Result<Compound<'t>, NoTape> {
        Ok(self.open(Tok::Arr(0)))
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Compound<'t>, NoTape> {
        Ok(self.open(Tok::Arr(0)))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Compound<'t>, NoTape> {
        Ok(self.variant(variant, Tok::Arr(0)))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Compound<'t>, NoTape> {
        Ok(self.open(Tok::Obj(0)))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Compound<'t>, NoTape> {
        Ok(self.open(Tok::Obj(0)))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Compound<'t>, NoTape> {
        Ok(self.variant(variant, Tok::Obj(0)))
    }
}

/// The element-by-element containers: each item is one value.
macro_rules! items {
    ($($name:ident::$method:ident),*) => {$(
        impl ser::$name for Compound<'_> {
            type Ok = ();
            type Error = NoTape;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), NoTape> {
                self.item(value)
            }
            fn end(self) -> Result<(), NoTape> {
                self.close()
            }
        }
    )*};
}

items!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

/// The field-by-field containers: each item is a named value.
macro_rules! fields {
    ($($name:ident),*) => {$(
        impl ser::$name for Compound<'_> {
            type Ok = ();
            type Error = NoTape;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), NoTape> {
                self.key(key);
                self.item(value)
            }
            fn end(self) -> Result<(), NoTape> {
                self.close()
            }
        }
    )*};
}

fields!(SerializeStruct, SerializeStructVariant);

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = NoTape;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), NoTape> {
        key.serialize(KeyWriter { compound: self })
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), NoTape> {
        self.item(value)
    }
    fn end(self) -> Result<(), NoTape> {
        self.close()
    }
}

/// Map-key methods that fail the tape.
macro_rules! refuse {
    ($($method:ident($ty:ty)),*) => {$(
        fn $method(self, _: $ty) -> Result<(), NoTape> {
            Err(NoTape)
        }
    )*};
}

/// Writes a map key: strings only (anything else fails the tape).
struct KeyWriter<'c, 't> {
    compound: &'c mut Compound<'t>,
}

impl ser::Serializer for KeyWriter<'_, '_> {
    type Ok = ();
    type Error = NoTape;
    type SerializeSeq = ser::Impossible<(), NoTape>;
    type SerializeTuple = ser::Impossible<(), NoTape>;
    type SerializeTupleStruct = ser::Impossible<(), NoTape>;
    type SerializeTupleVariant = ser::Impossible<(), NoTape>;
    type SerializeMap = ser::Impossible<(), NoTape>;
    type SerializeStruct = ser::Impossible<(), NoTape>;
    type SerializeStructVariant = ser::Impossible<(), NoTape>;

    fn serialize_str(self, v: &str) -> Result<(), NoTape> {
        self.compound.key(v);
        Ok(())
    }
    refuse!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_char(char),
        serialize_bytes(&[u8]),
        serialize_unit_struct(&'static str)
    );
    fn serialize_none(self) -> Result<(), NoTape> {
        Err(NoTape)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<(), NoTape> {
        Err(NoTape)
    }
    fn serialize_unit(self) -> Result<(), NoTape> {
        Err(NoTape)
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
    ) -> Result<(), NoTape> {
        Err(NoTape)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<(), NoTape> {
        Err(NoTape)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), NoTape> {
        Err(NoTape)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, NoTape> {
        Err(NoTape)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, NoTape> {
        Err(NoTape)
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, NoTape> {
        Err(NoTape)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, NoTape> {
        Err(NoTape)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, NoTape> {
        Err(NoTape)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, NoTape> {
        Err(NoTape)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, NoTape> {
        Err(NoTape)
    }
}
