package client_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/healthagents/healthagents/client"
)

// TestEveryListHasOneShape: every List method of the SDK walks the list
// as an iter.Seq2[T, error], and has a ListXPage method taking offset and
// limit (after the list's own arguments) that returns client.Page[T] of
// the same T. A list of another shape fails here.
func TestEveryListHasOneShape(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeFor[*client.Client]()
	errType := reflect.TypeFor[error]()
	ctxType := reflect.TypeFor[context.Context]()
	intType := reflect.TypeFor[int]()
	n := 0
	for m := range typ.Methods() {
		if !strings.HasPrefix(m.Name, "List") || strings.HasSuffix(m.Name, "Page") {
			continue
		}
		n++
		f := m.Type // receiver first
		// iter.Seq2[T, error] is func(yield func(T, error) bool).
		if f.NumOut() != 1 || f.Out(0).Kind() != reflect.Func || f.Out(0).NumIn() != 1 {
			t.Errorf("%s does not return an iter.Seq2[T, error]: %s", m.Name, f)
			continue
		}
		yield := f.Out(0).In(0)
		if yield.NumIn() != 2 || yield.In(1) != errType || yield.NumOut() != 1 || yield.Out(0).Kind() != reflect.Bool {
			t.Errorf("%s does not return an iter.Seq2[T, error]: %s", m.Name, f)
			continue
		}
		item := yield.In(0)
		page, ok := typ.MethodByName(m.Name + "Page")
		if !ok {
			t.Errorf("%s has no %sPage", m.Name, m.Name)
			continue
		}
		p := page.Type
		in := p.NumIn()
		if in < 4 || p.In(1) != ctxType || p.In(in-2) != intType || p.In(in-1) != intType {
			t.Errorf("%sPage does not take (ctx, …, offset, limit int): %s", m.Name, p)
		}
		for i := 1; i < f.NumIn(); i++ {
			if i >= in-2 || p.In(i) != f.In(i) {
				t.Errorf("%sPage does not take %s's arguments first: %s, %s", m.Name, m.Name, p, f)
				break
			}
		}
		want := reflect.TypeFor[client.Page[struct{}]]()
		if p.NumOut() != 2 || p.Out(1) != errType || p.Out(0).PkgPath() != want.PkgPath() ||
			!strings.HasPrefix(p.Out(0).Name(), "Page[") {
			t.Errorf("%sPage does not return (client.Page[T], error): %s", m.Name, p)
			continue
		}
		if field, ok := p.Out(0).FieldByName("Items"); !ok || field.Type != reflect.SliceOf(item) {
			t.Errorf("%sPage's Page is not of %s's item type %s", m.Name, m.Name, item)
		}
	}
	if n < 6 {
		t.Fatalf("found %d List methods; the SDK has at least keys, webhooks, deliveries, audit, issuers and tasks", n)
	}
}
