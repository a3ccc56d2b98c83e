// Package hostile is the hostile-plan suite: the attacks a hostile renderer plugin could make on
// the host (docs/PROFILES.md §5), each with the rule of host/plan that must refuse it, and what
// it takes to try them on any plugin of any harness through the whole pipeline.
//
// An attack tampers with what crosses the plugin boundary, from the host's side: Wrap wraps a
// loaded plugin so that a render whose context names an attack (WithAttack) sends the plugin
// the attack's lie instead of the vetted request and edits the plan the plugin returns, before
// the host decodes and checks it. Everything an attack needs to know about the harness (the
// config file, its format and keys, the config-home variable, the flags, a path outside the
// harness's paths) is read from the harness's reviewed profile and the plugin's manifest, and
// whether it applies at all (Attack.Rule) too: a harness loadout has never seen is attacked
// with no change to this package. Run renders Request faithfully and under every attack that
// applies, isolated and with ambient auth, and judges each render (`loadout conformity
// --hostile`); host's TestHostilePlans runs the same attacks with assertions of its own.
//
// The package keeps no state: Wrap's plugin is safe for concurrent use when the plugin it wraps
// is, and Run is safe to call from several goroutines; it owns nothing it is given.
package hostile
