/* A simulated node's read-only tool as its users run it: every such tool on the node's PATH is
 * a link to this program (built by the rack as it comes up). It hands its name, its arguments and
 * its stdin, stdout and stderr to the node's stand-in server (rackproof_sim/standins/server.py),
 * which prints as the tool does, as the caller, and exits with the tool's status.
 *
 * Compiled, not Python: a Python client spent ~7 ms of CPU starting for each of the ~500 calls of
 * a thor5 run; this one, well under one. STANDIN_SOCKET and MAX_REQUEST are given by the build
 * (server.SOCKET, server.MAX_REQUEST). */

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int fail(const char *what, const char *tool) {
    if (tool)
        fprintf(stderr, "rackproof sim: the node's stand-in server ended %s without an exit status\n", tool);
    else
        fprintf(stderr, "rackproof sim: the node's stand-in server did not answer (%s: %m)\n", what);
    return tool ? 1 : 127;
}

int main(int argc, char **argv) {
    static char request[MAX_REQUEST];
    if (argc < 1) {                               /* execve without even a name: no tool to ask for */
        fputs("rackproof sim: a stand-in tool started without its name (argv[0])\n", stderr);
        return 127;
    }
    const char *tool = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
    size_t len = 0;
    for (int i = 0; i < argc; i++) {              /* the tool's name, then its arguments, NUL apart */
        const char *part = i ? argv[i] : tool;
        size_t n = strlen(part) + (i + 1 < argc);
        if (len + n > sizeof request) {
            fprintf(stderr, "%s: argument list too long\n", tool);
            return 127;
        }
        memcpy(request + len, part, n);
        len += n;
    }

    int conn = socket(AF_UNIX, SOCK_SEQPACKET, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    strncpy(addr.sun_path, STANDIN_SOCKET, sizeof addr.sun_path - 1);
    if (conn < 0 || connect(conn, (struct sockaddr *)&addr, sizeof addr) < 0)
        return fail(STANDIN_SOCKET, NULL);

    int fds[3] = {0, 1, 2};
    union { char buf[CMSG_SPACE(sizeof fds)]; struct cmsghdr align; } control;
    struct iovec iov = {.iov_base = request, .iov_len = len};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                         .msg_controllen = sizeof control.buf};
    struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof fds);
    memcpy(CMSG_DATA(cmsg), fds, sizeof fds);
    if (sendmsg(conn, &msg, 0) < 0)
        return fail(STANDIN_SOCKET, NULL);

    unsigned char status;
    ssize_t got = recv(conn, &status, 1, 0);
    close(conn);
    if (got < 0)
        return fail(STANDIN_SOCKET, NULL);
    return got == 1 ? status : fail(NULL, tool);
}
