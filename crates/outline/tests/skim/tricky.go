// Package tricky: what the skimming lexer must read right.
package tricky

import "strings"

// Store holds things.
type Store struct {
	name string
}

// Open opens a store.
func Open(name string) *Store {
	if strings.Contains(name, "}") {
		return &Store{name: `{`}
	}
	return &Store{name: name}
}

// Name is its name.
func (s *Store) Name() string { return s.name + "}" + string('{') }

var table = map[string]int{"a": 1, "}": 2, "{": 3, "b": 4, "c": 5, "d": 6}

const Limit = 3
