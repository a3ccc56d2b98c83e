package policy

import (
	"context"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// A residual is the partially evaluated decision (the bodies prepare builds its rule from)
// compiled for the host to run itself, when every body is in a small fragment of Rego:
//
//   - each expression is a plain unification (=), not negated, without with;
//   - exactly one of them binds the query's result variable; every other compares two values;
//   - a value is a constant, a reference into the input through constant keys, an array or a
//     set of values, or a call of one of the pure built-ins of residualBuiltins on values.
//
// That is what partial evaluation leaves of a policy that states facts as sets and combines
// them with set operations (the default policies). The values, the built-in functions and the
// comparisons are OPA's own (ast values, topdown.GetBuiltin, Term.Equal): what a residual adds
// is only the walk over the expressions, without topdown's bindings, continuations and copies.
//
// A policy outside the fragment has no residual and every decision is OPA's evaluation. So does
// any evaluation a residual cannot finish exactly as topdown would without further thought: a
// reference the input does not have, a built-in that errors or is undefined, or a number of
// defined bodies other than one. Decide then evaluates the prepared query, which gives the same
// result, error or undefined decision it always would. A residual is immutable and safe for
// concurrent use.
type residual struct {
	bodies   []residualBody
	operands int // of all calls together
}

// residualBody is one body: its comparisons, then its result.
type residualBody struct {
	guards [][2]residualTerm
	result residualTerm
}

// residualTerm is a value the residual computes from the input. Exactly one field is set.
type residualTerm struct {
	constant *ast.Term
	input    ast.Ref // the keys after input
	array    []residualTerm
	set      []residualTerm
	call     *residualCall
}

type residualCall struct {
	fn   topdown.BuiltinFunc
	args []residualTerm
}

// residualBuiltins are the built-ins a residual calls itself: pure functions of their
// operands that never read the evaluation's context (clock, cache, entropy, tracing).
var residualBuiltins = map[string]bool{
	ast.And.Name:          true,
	ast.Or.Name:           true,
	ast.Minus.Name:        true,
	ast.Intersection.Name: true,
	ast.Union.Name:        true,
	ast.Count.Name:        true,
	ast.ArrayConcat.Name:  true,
}

// compileResidual compiles the partially evaluated bodies whose result is bound to the
// variable result, or returns nil when any of them is outside the fragment.
func compileResidual(bodies []ast.Body, result ast.Var) *residual {
	if len(bodies) == 0 {
		return nil
	}
	r := &residual{bodies: make([]residualBody, 0, len(bodies))}
	for _, body := range bodies {
		b, ok := compileResidualBody(body, result, &r.operands)
		if !ok {
			return nil
		}
		r.bodies = append(r.bodies, b)
	}
	return r
}

func compileResidualBody(body ast.Body, result ast.Var, operands *int) (residualBody, bool) {
	var b residualBody
	bound := false
	for _, expr := range body {
		if expr.Negated || len(expr.With) > 0 || !expr.IsEquality() {
			return b, false
		}
		lhs, rhs := expr.Operand(0), expr.Operand(1)
		if v, ok := rhs.Value.(ast.Var); ok && v.Equal(result) {
			lhs, rhs = rhs, lhs
		}
		if v, ok := lhs.Value.(ast.Var); ok && v.Equal(result) {
			t, ok := compileResidualTerm(rhs, operands)
			if !ok || bound {
				return b, false
			}
			b.result, bound = t, true
			continue
		}
		l, okl := compileResidualTerm(lhs, operands)
		r, okr := compileResidualTerm(rhs, operands)
		if !okl || !okr {
			return b, false
		}
		b.guards = append(b.guards, [2]residualTerm{l, r})
	}
	return b, bound
}

func compileResidualTerm(t *ast.Term, operands *int) (residualTerm, bool) {
	if ast.IsConstant(t.Value) {
		return residualTerm{constant: t}, true
	}
	switch v := t.Value.(type) {
	case ast.Ref:
		if len(v) < 2 || !v[0].Equal(ast.InputRootDocument) {
			return residualTerm{}, false
		}
		for _, k := range v[1:] {
			if _, ok := k.Value.(ast.String); !ok {
				return residualTerm{}, false
			}
		}
		return residualTerm{input: v[1:]}, true
	case *ast.Array:
		elems := make([]residualTerm, v.Len())
		for i := range v.Len() {
			e, ok := compileResidualTerm(v.Elem(i), operands)
			if !ok {
				return residualTerm{}, false
			}
			elems[i] = e
		}
		return residualTerm{array: elems}, true
	case ast.Set:
		elems := make([]residualTerm, 0, v.Len())
		for _, e := range v.Slice() {
			t, ok := compileResidualTerm(e, operands)
			if !ok {
				return residualTerm{}, false
			}
			elems = append(elems, t)
		}
		return residualTerm{set: elems}, true
	case ast.Call:
		op, ok := v[0].Value.(ast.Ref)
		if !ok {
			return residualTerm{}, false
		}
		name := op.String()
		fn := topdown.GetBuiltin(name)
		if !residualBuiltins[name] || fn == nil {
			return residualTerm{}, false
		}
		c := &residualCall{fn: fn, args: make([]residualTerm, len(v)-1)}
		for i, a := range v[1:] {
			if c.args[i], ok = compileResidualTerm(a, operands); !ok {
				return residualTerm{}, false
			}
		}
		*operands += len(c.args)
		return residualTerm{call: c}, true
	}
	// Objects, sets and comprehensions with references in them, variables, refs to data:
	// OPA evaluates those.
	return residualTerm{}, false
}

// eval runs the residual over input. ok is false when the evaluation must be OPA's (see
// residual); otherwise the result is the decision topdown would have produced.
func (r *residual) eval(ctx context.Context, input ast.Value) (result *ast.Term, ok bool) {
	ev := &residualEval{bctx: topdown.BuiltinContext{Context: ctx}, input: input, operands: make([]*ast.Term, r.operands)}
	ev.iter = func(v *ast.Term) error { ev.out = v; return nil }
	for i := range r.bodies {
		t, defined, ok := ev.body(&r.bodies[i])
		if !ok {
			return nil, false
		}
		if !defined {
			continue
		}
		if result != nil {
			// Two bodies decide: topdown reports the conflict, or agrees on one value.
			return nil, false
		}
		result = t
	}
	return result, result != nil
}

// residualEval is the state of one evaluation: the operand slots of every call (each call
// its own, since a built-in may keep what it is given) and the one iterator the calls share.
type residualEval struct {
	bctx     topdown.BuiltinContext
	input    ast.Value
	operands []*ast.Term
	iter     func(*ast.Term) error
	out      *ast.Term
}

// body is b's result, defined when every guard holds; ok is false when OPA must decide.
func (ev *residualEval) body(b *residualBody) (result *ast.Term, defined, ok bool) {
	for i := range b.guards {
		l, ok := ev.term(&b.guards[i][0])
		if !ok {
			return nil, false, false
		}
		r, ok := ev.term(&b.guards[i][1])
		if !ok {
			return nil, false, false
		}
		if !l.Equal(r) {
			return nil, false, true
		}
	}
	result, ok = ev.term(&b.result)
	return result, ok, ok
}

// term is t's value; ok is false when OPA must evaluate it (a missing reference, a built-in
// that errors or has no value).
func (ev *residualEval) term(t *residualTerm) (*ast.Term, bool) {
	switch {
	case t.constant != nil:
		return t.constant, true
	case t.input != nil:
		v, e := ev.input, (*ast.Term)(nil)
		for _, k := range t.input {
			obj, ok := v.(ast.Object)
			if !ok {
				return nil, false
			}
			if e = obj.Get(k); e == nil {
				return nil, false
			}
			v = e.Value
		}
		return e, true
	case t.array != nil:
		elems := make([]*ast.Term, len(t.array))
		for i := range t.array {
			e, ok := ev.term(&t.array[i])
			if !ok {
				return nil, false
			}
			elems[i] = e
		}
		return ast.ArrayTerm(elems...), true
	case t.set != nil:
		elems := make([]*ast.Term, len(t.set))
		for i := range t.set {
			e, ok := ev.term(&t.set[i])
			if !ok {
				return nil, false
			}
			elems[i] = e
		}
		return ast.SetTerm(elems...), true
	case t.call != nil:
		n := len(t.call.args)
		operands := ev.operands[:n:n]
		ev.operands = ev.operands[n:]
		for i := range t.call.args {
			a, ok := ev.term(&t.call.args[i])
			if !ok {
				return nil, false
			}
			operands[i] = a
		}
		ev.out = nil
		if err := t.call.fn(ev.bctx, operands, ev.iter); err != nil || ev.out == nil {
			return nil, false
		}
		return ev.out, true
	}
	return nil, false
}
