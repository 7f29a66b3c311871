// Package model is the single validation package of tablebridge. It owns the
// Azure Table service data model: the Entity type, table names, property
// names, key characters and lengths, property count, value and entity size
// limits, and reserved names. Every rule returns Azure's error code (package
// apierr) and nothing else decides them.
//
// It knows nothing of HTTP or storage.
package model
