//! State the op families and engines keep while one entry is emitted, one
//! value per type, each type defined and read by the family that owns it
//! (the `cp.async` copies in flight of [`crate::lower::emit::copies::direct`], say).
//! The lowering context holds them without naming any family, so adding an
//! engine adds a file, not a field.
use std::any::{Any, TypeId};
use std::fmt;
use std::rc::Rc;

use rustc_hash::FxHashMap as HashMap;

/// One value of each state type, created on first use.
#[derive(Default)]
pub struct States(HashMap<TypeId, Box<dyn Any>>);

impl States {
    /// The state of type `T`, its default until first written.
    pub fn get<T: Any + Default>(&mut self) -> &mut T {
        self.0
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Box::new(T::default()))
            .downcast_mut::<T>()
            .expect("each state is stored under its own type")
    }

    /// The state of type `T`, if anything created it.
    pub fn peek<T: Any>(&self) -> Option<&T> {
        self.0.get(&TypeId::of::<T>())?.downcast_ref::<T>()
    }
}

impl fmt::Debug for States {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "States({} kinds)", self.0.len())
    }
}

/// A value an op family holds in a form of its own rather than in
/// registers (a load copied into a product's shared-memory buffer, a load
/// its product streams slice by slice); the family reads it back by type.
#[derive(Clone)]
pub struct Deferred {
    value: Rc<dyn Any>,
}

impl Deferred {
    /// `value`, held by its family.
    pub fn new<T: Any>(value: Rc<T>) -> Deferred {
        Deferred { value }
    }

    /// The value, if it is a `T`.
    pub fn get<T: Any>(&self) -> Option<Rc<T>> {
        self.value.clone().downcast::<T>().ok()
    }

    /// Whether the value is a `T`.
    pub fn is<T: Any>(&self) -> bool {
        self.value.is::<T>()
    }
}

impl fmt::Debug for Deferred {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Deferred")
    }
}
