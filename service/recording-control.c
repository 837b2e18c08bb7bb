/* recording-control.c: control fd and marks (owned by the control work;
 * until it lands, both answer NotSupported). */
#include "recording-control.h"

#include "periscope-errors.h"

int recording_method_open_control_fd(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return sd_bus_error_setf(error, PERISCOPE_ERROR_NOT_SUPPORTED,
                                 "OpenControlFd is not available in this version of periscoped");
}

int recording_method_add_mark(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return sd_bus_error_setf(error, PERISCOPE_ERROR_NOT_SUPPORTED,
                                 "AddMark is not available in this version of periscoped");
}
