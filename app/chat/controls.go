package chat

import (
	"errors"
	"fmt"
	"strings"

	"hark/engine"
	"hark/engine/grammar"
	"hark/models/chattemplate"
)

// The chat controls beyond sampling: stop strings, structured (JSON)
// output, the thinking switch, tools and token probabilities. They live in
// Sampling so they are saved with the conversation.

// JSON output modes.
const (
	jsonObject = "object" // any JSON object
	jsonSchema = "schema" // valid against Sampling.JSONSchema
)

const maxStops = 16

func (c Sampling) validateControls() error {
	var errs []error
	if len(c.Stop) > maxStops {
		errs = append(errs, fmt.Errorf("%d stop strings, at most %d", len(c.Stop), maxStops))
	}
	for _, s := range c.Stop {
		if s == "" {
			errs = append(errs, errors.New("a stop string is empty"))
		}
	}
	switch c.JSON {
	case "", jsonObject:
	case jsonSchema:
		if strings.TrimSpace(c.JSONSchema) == "" {
			errs = append(errs, errors.New("JSON output by schema needs a schema"))
		} else if _, err := grammar.Compile([]byte(c.JSONSchema), nil); err != nil {
			errs = append(errs, err)
		}
	default:
		errs = append(errs, fmt.Errorf("JSON output %q must be %q or %q", c.JSON, jsonObject, jsonSchema))
	}
	if _, err := c.toolList(); err != nil {
		errs = append(errs, err)
	}
	if c.Logprobs != nil && (*c.Logprobs < 0 || *c.Logprobs > engine.MaxTopLogprobs) {
		errs = append(errs, fmt.Errorf("token probabilities: %d alternatives must be between 0 and %d", *c.Logprobs, engine.MaxTopLogprobs))
	}
	return errors.Join(errs...)
}

// toolList decodes the tools JSON, keeping key order for the template.
func (c Sampling) toolList() ([]any, error) {
	if strings.TrimSpace(c.Tools) == "" {
		return nil, nil
	}
	v, err := chattemplate.DecodeJSON([]byte(c.Tools))
	if err != nil {
		return nil, fmt.Errorf("tools: not JSON: %w", err)
	}
	list, ok := v.([]any)
	if !ok {
		return nil, errors.New("tools: want a JSON list of tool definitions")
	}
	return list, nil
}

// applyControls sets the stop strings and logprobs on opt.
func (c Sampling) applyControls(opt *engine.Options) {
	opt.Stop = append(opt.Stop, c.Stop...)
	if c.Logprobs != nil {
		opt.Logprobs, opt.TopLogprobs = true, *c.Logprobs
	}
}

// constraint starts the JSON output grammar for e, if one is set.
func (c Sampling) constraint(e *engine.Engine) (engine.Constraint, error) {
	switch c.JSON {
	case jsonObject:
		return grammar.ForJSONObject(e), nil
	case jsonSchema:
		s, err := grammar.ForSchema(e, []byte(c.JSONSchema))
		if err != nil {
			return nil, fmt.Errorf("JSON output: %w", err)
		}
		return s, nil
	}
	return nil, nil
}

// promptVars are what the chat template gets besides the messages.
type promptVars struct {
	tools []any
	extra map[string]any
}

// templateVars resolves the thinking switch and tools for e's template.
// A setting the template cannot use is left out with a notice, so that
// switching models does not break a conversation.
func (c Sampling) templateVars(e *engine.Engine) (promptVars, []string, error) {
	var v promptVars
	var notices []string
	if c.Think == nil && c.JSON != "" && e.SupportsThinking() {
		// JSON output starts at the first token: there is no room for
		// thoughts, so ask the template not to open them.
		v.extra = map[string]any{"enable_thinking": false}
	}
	if c.Think != nil {
		if e.SupportsThinking() {
			v.extra = map[string]any{"enable_thinking": *c.Think}
		} else {
			notices = append(notices, "This model's chat template has no thinking switch: the setting is ignored.")
		}
	}
	tools, err := c.toolList()
	if err != nil {
		return v, nil, err
	}
	if tools != nil {
		if e.SupportsTools() {
			v.tools = tools
		} else {
			notices = append(notices, "This model's chat template does not render tools: they are left out.")
		}
	}
	return v, notices, nil
}
