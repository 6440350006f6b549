//! Typed handles into arenas (as in Cranelift's `entity` crate): a handle is
//! a `u32` index that can only index the arena of its own kind.

use std::marker::PhantomData;
use std::ops::{Index, IndexMut};

pub trait EntityRef: Copy + Eq {
    fn new(index: usize) -> Self;
    fn index(self) -> usize;
}

macro_rules! entity {
    ($name:ident, $prefix:literal) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u32);
        impl EntityRef for $name {
            fn new(index: usize) -> Self {
                $name(index as u32)
            }
            fn index(self) -> usize {
                self.0 as usize
            }
        }
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}

entity!(Reg, "v");
entity!(BlockId, "bb");
entity!(FuncId, "fn");
entity!(GlobalId, "g");
entity!(LocalId, "l");

/// A vector of `T` indexed by handles `K`.
#[derive(Debug, Clone, PartialEq)]
pub struct Arena<K: EntityRef, T> {
    items: Vec<T>,
    _key: PhantomData<K>,
}

impl<K: EntityRef, T> Default for Arena<K, T> {
    fn default() -> Self {
        Arena {
            items: Vec::new(),
            _key: PhantomData,
        }
    }
}

impl<K: EntityRef, T> Arena<K, T> {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn push(&mut self, item: T) -> K {
        self.items.push(item);
        K::new(self.items.len() - 1)
    }
    pub fn len(&self) -> usize {
        self.items.len()
    }
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    pub fn get(&self, k: K) -> Option<&T> {
        self.items.get(k.index())
    }
    pub fn iter(&self) -> impl Iterator<Item = (K, &T)> {
        self.items.iter().enumerate().map(|(i, t)| (K::new(i), t))
    }
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (K, &mut T)> {
        self.items
            .iter_mut()
            .enumerate()
            .map(|(i, t)| (K::new(i), t))
    }
    pub fn keys(&self) -> impl Iterator<Item = K> {
        (0..self.items.len()).map(K::new)
    }
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.items.iter()
    }
    pub fn contains(&self, k: K) -> bool {
        k.index() < self.items.len()
    }
}

impl<K: EntityRef, T> Index<K> for Arena<K, T> {
    type Output = T;
    fn index(&self, k: K) -> &T {
        &self.items[k.index()]
    }
}

impl<K: EntityRef, T> IndexMut<K> for Arena<K, T> {
    fn index_mut(&mut self, k: K) -> &mut T {
        &mut self.items[k.index()]
    }
}
