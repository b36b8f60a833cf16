/* Intrusive singly linked lists: any struct with a `next` member of its own pointer type, headed
 * by a plain pointer. A list is walked through its links (the address of the head or of some
 * item's `next`), so removal needs no previous-item bookkeeping. */
#ifndef DSH_LIST_H
#define DSH_LIST_H

/* Declares `link` and visits the address of the head and of every item's `next` while *link is an
 * item: `DSH_LIST_FOREACH_LINK(link, &owner->items) if ((*link)->id == id) ...`. */
#define DSH_LIST_FOREACH_LINK(link, head)                                                          \
    for (__typeof__(*(head)) *link = (head); *link; link = &(*link)->next)

/* Takes the item *link out of its list; link then names its successor. */
#define DSH_LIST_UNLINK(link) (*(link) = (*(link))->next)

/* Takes item out of the list *head; nothing when it is not on it. */
#define DSH_LIST_REMOVE(head, item)                                                                \
    do {                                                                                           \
        DSH_LIST_FOREACH_LINK(dsh_list_link_, head)                                                \
            if (*dsh_list_link_ == (item)) {                                                       \
                DSH_LIST_UNLINK(dsh_list_link_);                                                   \
                break;                                                                             \
            }                                                                                      \
    } while (0)

#endif
