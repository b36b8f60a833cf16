/* Provider-row configuration: YAML (libyaml) validated against catalog.yaml. The one header users
 * outside config/ include; it only includes the header of each part (see README.md).
 *
 * Errors are negative errno: -EINVAL (invalid input, details in diagnostics),
 * -ENOMEM, -ENOENT (getters: no value and no static default). */
#ifndef DSH_CONFIG_H
#define DSH_CONFIG_H

#include "dsh_catalog.h"
#include "dsh_catalog_lookup.h"
#include "dsh_diagnostics.h"
#include "dsh_emit.h"
#include "dsh_getters.h"
#include "dsh_row.h"
#include "dsh_strv.h"
#include "dsh_typed_config.h"
#include "dsh_validate.h"
#include "dsh_yaml_load.h"
#include "dsh_yaml_node.h"

#endif
