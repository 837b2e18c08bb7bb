/* capability-drop.h: a root periscoped keeps only the capabilities it uses
 * (docs/security.md lists each with its reason), so a daemon started by hand
 * or by an init without a CapabilityBoundingSet= is as limited as the
 * systemd unit makes it. */
#pragma once

/* When running with any capability: removes every capability but the
 * daemon's own from the bounding set (so programs it starts, bwrap
 * included, cannot regain them), and from the permitted, effective,
 * inheritable and ambient sets. 0, or a negative errno. */
int capability_drop_unused(void);
