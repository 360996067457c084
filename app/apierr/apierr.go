// Package apierr marks an error with the HTTP status it should answer, so
// feature packages can say "not found" or "the caller's mistake" without
// knowing about the router in app that turns errors into responses.
package apierr

import (
	"errors"
	"net/http"
)

// Error carries an HTTP status with an error; its text is the error's.
type Error struct {
	Status int
	Err    error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// BadRequest marks err as the caller's mistake (HTTP 400).
func BadRequest(err error) error { return &Error{http.StatusBadRequest, err} }

// NotFound marks err as a missing thing (HTTP 404).
func NotFound(err error) error { return &Error{http.StatusNotFound, err} }

// Conflict marks err as a clash with current state (HTTP 409).
func Conflict(err error) error { return &Error{http.StatusConflict, err} }

// TooLarge marks err as a body over its limit (HTTP 413).
func TooLarge(err error) error { return &Error{http.StatusRequestEntityTooLarge, err} }

// Status is the status err was marked with, if any.
func Status(err error) (int, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Status, true
	}
	return 0, false
}
