package fake

import (
	"fmt"
	"reflect"
	"strings"
)

// call returns fn, or when fn is nil a function of its type that
// returns zero values with the error that method (Type.Method) was
// called without its field set, and panics with that error where the
// function returns no error.
func call[F any](fn F, method string) F {
	if !reflect.ValueOf(&fn).Elem().IsNil() {
		return fn
	}
	t := reflect.TypeFor[F]()
	err := fmt.Errorf("fake: %s called, but its %sFn is not set", method, method[strings.LastIndexByte(method, '.')+1:])
	return reflect.MakeFunc(t, func([]reflect.Value) []reflect.Value {
		n := t.NumOut()
		if n == 0 || t.Out(n-1) != reflect.TypeFor[error]() {
			panic(err)
		}
		out := make([]reflect.Value, n)
		for i := range n - 1 {
			out[i] = reflect.Zero(t.Out(i))
		}
		out[n-1] = reflect.ValueOf(&err).Elem()
		return out
	}).Interface().(F)
}
