"""What a trace is made of: the provider's manifest (generated), the event registry and its templates, typed
Events, the Tracker that keeps a trace's state, times and provider names."""
